//! `arm_ik ports`: the serial ports on this machine with their USB ids.

use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Print one JSON object per port instead of a table.
    #[arg(long)]
    json: bool,
}

pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    let ports = arm_ik::servo::ports::list()
        .map_err(|e| anyhow::anyhow!("cannot list serial ports: {e}"))?;
    if a.json {
        for p in &ports {
            outln!("{}", serde_json::to_string(p)?)?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    if ports.is_empty() {
        outln!(
            "no serial ports found (plug the adapter in; a USB one shows as /dev/ttyUSB* or /dev/ttyACM*)"
        )?;
    } else {
        outln!("{:<20} {:<10} {:<10} device", "port", "type", "usb id")?;
    }
    for p in &ports {
        let usb = p.usb_id.as_deref().unwrap_or("-");
        let what = [p.manufacturer.as_deref(), p.product.as_deref(), p.hint]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(", ");
        outln!("{:<20} {:<10} {:<10} {what}", p.path, p.kind, usb)?;
    }
    Ok(ExitCode::SUCCESS)
}
