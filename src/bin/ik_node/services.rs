//! The node's `std_srvs/srv/Trigger` services, compiled where the sourced
//! ROS has std_srvs (`cfg(std_srvs)`, set by `build.rs`). Each request
//! becomes a [`Command`] in the merged input stream; the reply says
//! whether the core took it, and is sent once it did.

use super::inputs::Input;
use arm_ik::node::{Command, Refused};
use arm_ik::ros::convert;
use futures::stream::{BoxStream, StreamExt};
use r2r::QosProfile;
use r2r::std_srvs::srv::Trigger;

/// A Trigger service at `name` whose requests become `command`; `done`
/// is the reply's message when the core takes it.
fn trigger(
    node: &mut r2r::Node,
    name: &str,
    source: &'static str,
    command: Command,
    done: String,
) -> anyhow::Result<BoxStream<'static, Input>> {
    let requests = node.create_service::<Trigger::Service>(name, QosProfile::default())?;
    Ok(requests
        .map(move |req| {
            let done = done.clone();
            Input {
                source,
                command: command.clone(),
                reply: Some(Box::new(move |taken: &Result<(), Refused>| {
                    let r = convert::trigger_reply(taken, &done);
                    let msg = Trigger::Response {
                        success: r.success,
                        message: r.message,
                    };
                    req.respond(msg).map_err(anyhow::Error::from)
                })),
            }
        })
        .boxed())
}

/// Every service: the gripper, relax and enable, home, one
/// `~/go_to/<name>` per pose of the poses file and one `~/program/<name>`
/// per program.
pub fn create(
    node: &mut r2r::Node,
    poses: &[String],
    programs: &[String],
) -> anyhow::Result<Vec<BoxStream<'static, Input>>> {
    let pose = |name: &str| Command::Pose {
        name: name.to_owned(),
    };
    let mut services = vec![
        trigger(
            node,
            "~/open_gripper",
            "open_gripper",
            Command::OpenGripper,
            "opening the gripper".into(),
        )?,
        trigger(
            node,
            "~/close_gripper",
            "close_gripper",
            Command::CloseGripper,
            "closing the gripper".into(),
        )?,
        trigger(
            node,
            "~/relax",
            "relax",
            Command::Relax,
            "relaxed: the servos are limp until ~/enable".into(),
        )?,
        trigger(
            node,
            "~/enable",
            "enable",
            Command::Enable,
            "enabled: holding where the arm is".into(),
        )?,
        trigger(
            node,
            "~/home",
            "home",
            pose("home"),
            "moving to pose 'home'".into(),
        )?,
    ];
    for name in poses {
        services.push(go_to(node, name)?);
    }
    for name in programs {
        services.push(trigger(
            node,
            &format!("~/program/{name}"),
            "program",
            Command::Program { name: name.clone() },
            format!("running program '{name}'"),
        )?);
    }
    Ok(services)
}

/// `~/go_to/<name>`: at start for every pose of the poses file, and when
/// a pose is recorded under a new name while the node runs.
pub fn go_to(node: &mut r2r::Node, name: &str) -> anyhow::Result<BoxStream<'static, Input>> {
    trigger(
        node,
        &format!("~/go_to/{name}"),
        "go_to",
        Command::Pose {
            name: name.to_owned(),
        },
        format!("moving to pose '{name}'"),
    )
}
