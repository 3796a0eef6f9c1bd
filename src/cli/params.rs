//! `arm_ik params`: the ROS parameters of `ik_node` (or, with `--node`,
//! `leader_node`), from the node's one declaration of them, for people (a
//! table) and for scripts (`--json`).

use arm_ik::node::{LeaderParams, NodeParams, ParamInfo, ParamTable, ParamValue};
use serde_json::json;
use std::process::ExitCode;

/// The nodes whose parameters can be listed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Node {
    /// The IK node.
    #[value(name = "ik_node")]
    IkNode,
    /// The leader arm's node (teleoperation over ROS).
    #[value(name = "leader_node")]
    LeaderNode,
}

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Which node's parameters.
    #[arg(long, value_enum, default_value = "ik_node")]
    node: Node,
    /// Print one JSON object: every parameter's name, type, default,
    /// description, allowed values (empty: any) and whether it is live.
    #[arg(long)]
    json: bool,
}

/// A default as a parameter file would spell it.
fn shown(v: &ParamValue) -> String {
    match v {
        ParamValue::String(s) if s.is_empty() => "\"\"".to_owned(),
        ParamValue::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn row(p: &ParamInfo) -> [String; 5] {
    let mut meaning = p.description.to_owned();
    if !p.allowed.is_empty() {
        meaning.push_str(&format!(" [{}]", p.allowed.join(", ")));
    }
    let when = if p.live { "live" } else { "start" };
    [
        p.name.to_owned(),
        p.kind.to_string(),
        shown(&p.default),
        when.to_owned(),
        meaning,
    ]
}

pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    match a.node {
        Node::IkNode => print::<NodeParams>(a.json, IK_NODE_NOTE),
        Node::LeaderNode => print::<LeaderParams>(a.json, LEADER_NODE_NOTE),
    }
}

const IK_NODE_NOTE: &str = "set: live parameters (solver, motion and gripper settings, which \
    need no new robot model or servo link) change while ik_node runs (ros2 param set), checked \
    as at start and taken at the next tick; start parameters are fixed when the node starts, \
    and setting one is refused.";

const LEADER_NODE_NOTE: &str = "set: leader_node reads every parameter at start; \
    leader_config, leader_port and urdf_path are needed.";

/// The table of node `T`'s parameters, or its JSON.
fn print<T: ParamTable>(json: bool, note: &str) -> anyhow::Result<ExitCode> {
    let schema = T::table();
    if json {
        let out = json!({ "node": T::NODE, "parameters": schema });
        outln!("{}", serde_json::to_string_pretty(&out)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    let header = ["parameter", "type", "default", "set", "meaning"].map(String::from);
    let rows: Vec<[String; 5]> = std::iter::once(header)
        .chain(schema.iter().map(row))
        .collect();
    let width = |i: usize| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0);
    let widths = [width(0), width(1), width(2), width(3)];
    for r in &rows {
        outln!(
            "{:w0$}  {:w1$}  {:w2$}  {:w3$}  {}",
            r[0],
            r[1],
            r[2],
            r[3],
            r[4],
            w0 = widths[0],
            w1 = widths[1],
            w2 = widths[2],
            w3 = widths[3]
        )?;
    }
    outln!("\n{note}")?;
    Ok(ExitCode::SUCCESS)
}
