//! Serial ports on this machine, with the USB ids that tell a CH340 bridge
//! from an Arduino or a Feetech bus adapter (`arm_ik ports`).

use serialport::{SerialPortInfo, SerialPortType};

/// One port as listed.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct PortEntry {
    pub path: String,
    /// "usb", "pci", "bluetooth" or "unknown".
    pub kind: &'static str,
    /// USB vendor and product id, as `lsusb` prints them (`1a86:7523`).
    pub usb_id: Option<String>,
    pub manufacturer: Option<String>,
    pub product: Option<String>,
    pub serial_number: Option<String>,
    /// What the USB id usually is on hobby arms, when we know it.
    pub hint: Option<&'static str>,
}

/// Well-known USB-serial chips on servo controllers and Arduinos.
fn hint(vid: u16, pid: u16) -> Option<&'static str> {
    Some(match (vid, pid) {
        (0x1a86, 0x7523) => "CH340 (Arduino Nano clones)",
        (0x1a86, 0x55d3) => "CH343 (Feetech/Waveshare bus servo adapters)",
        (0x1a86, _) => "WCH USB-serial",
        (0x2341, _) | (0x2a03, _) => "Arduino",
        (0x0403, 0x6001) | (0x0403, 0x6014) | (0x0403, 0x6015) => "FTDI (Dynamixel U2D2, USB-TTL)",
        (0x10c4, 0xea60) => "CP210x USB-serial",
        (0x1ffb, _) => "Pololu Maestro",
        _ => return None,
    })
}

impl From<SerialPortInfo> for PortEntry {
    fn from(p: SerialPortInfo) -> PortEntry {
        let mut e = PortEntry {
            path: p.port_name,
            kind: "unknown",
            usb_id: None,
            manufacturer: None,
            product: None,
            serial_number: None,
            hint: None,
        };
        match p.port_type {
            SerialPortType::UsbPort(u) => {
                e.kind = "usb";
                e.usb_id = Some(format!("{:04x}:{:04x}", u.vid, u.pid));
                e.hint = hint(u.vid, u.pid);
                e.manufacturer = u.manufacturer;
                e.product = u.product;
                e.serial_number = u.serial_number;
            }
            SerialPortType::PciPort => e.kind = "pci",
            SerialPortType::BluetoothPort => e.kind = "bluetooth",
            SerialPortType::Unknown => {}
        }
        e
    }
}

/// Every serial port the system reports, sorted by path.
pub fn list() -> Result<Vec<PortEntry>, serialport::Error> {
    let mut v: Vec<PortEntry> = serialport::available_ports()?
        .into_iter()
        .map(PortEntry::from)
        .collect();
    v.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serialport::UsbPortInfo;

    #[test]
    fn usb_ids_print_like_lsusb_with_a_hint() {
        let e = PortEntry::from(SerialPortInfo {
            port_name: "/dev/ttyUSB0".into(),
            port_type: SerialPortType::UsbPort(UsbPortInfo {
                vid: 0x1a86,
                pid: 0x7523,
                serial_number: None,
                manufacturer: Some("QinHeng".into()),
                product: None,
            }),
        });
        assert_eq!(e.usb_id.as_deref(), Some("1a86:7523"));
        assert_eq!(e.kind, "usb");
        assert!(e.hint.unwrap().contains("CH340"));
    }
}
