//! The speed ramp between the commands the caller sends and what the link
//! writes: each joint's speed limit, and the slow start-up move.

use super::StartPose;
use crate::servo::joint::{JointMap, park_commands};

/// Moves the output toward the commands at bounded speed (servo units).
#[derive(Debug, Clone)]
pub(crate) struct Ramp {
    current: Option<Vec<f64>>,
    speed: Vec<f64>,
    startup_speed: Vec<f64>,
    range: Vec<(i32, i32)>,
    /// Where servos that cannot report their position are assumed to rest
    /// at switch-on (commands), from the calibration's park pose.
    park: Option<Vec<f64>>,
    starting: bool,
}

impl Ramp {
    pub(crate) fn new(joints: &[JointMap], startup_speed: f64) -> Ramp {
        Ramp {
            current: None,
            speed: joints.iter().map(|j| j.speed_command()).collect(),
            startup_speed: joints.iter().map(|j| startup_speed * j.scale).collect(),
            range: joints.iter().map(|j| (j.min, j.max)).collect(),
            park: park_commands(joints).map(|p| p.into_iter().map(f64::from).collect()),
            starting: false,
        }
    }

    /// The hardware told where the servos are (clamped into range: a
    /// servo found beyond its range is brought back to it first); the
    /// next commands start from there at the start-up speed. When it
    /// cannot tell, the output resumes from where it was; on the first
    /// connection, when nothing was sent yet, it starts from the park
    /// pose, if the calibration gives one, at the start-up speed too.
    pub(crate) fn connected(&mut self, start: &StartPose) {
        match start {
            StartPose::Measured(p) | StartPose::Commanded(p) => {
                self.current = Some(
                    p.iter()
                        .zip(&self.range)
                        .map(|(&x, &(lo, hi))| f64::from(x.clamp(lo, hi)))
                        .collect(),
                );
                self.starting = true;
            }
            StartPose::Unknown if self.current.is_none() && self.park.is_some() => {
                self.current = self.park.clone();
                self.starting = true;
            }
            StartPose::Unknown => {}
        }
    }

    /// The servos were limp and hold again from `start`: measured or
    /// commanded positions as on connecting; when nobody can tell (hobby
    /// servos whose pulses were stopped), from the park pose if the
    /// calibration gives one, else from the last output. Either way the
    /// next commands are approached at the start-up speed.
    pub(crate) fn resumed(&mut self, start: &StartPose) {
        match start {
            StartPose::Unknown => {
                if self.park.is_some() {
                    self.current = self.park.clone();
                }
                self.starting = self.current.is_some();
            }
            known => self.connected(known),
        }
    }

    pub(crate) fn starting(&self) -> bool {
        self.starting
    }

    /// One period of `dt` s toward `target`; `None` until the first
    /// command. Without a known start (hobby servos without a park pose)
    /// the first command is sent as it is.
    pub(crate) fn step(&mut self, target: Option<&[i32]>, dt: f64) -> Option<Vec<i32>> {
        let target = target?;
        let cur = self
            .current
            .get_or_insert_with(|| target.iter().map(|&t| f64::from(t)).collect());
        let speeds = if self.starting {
            &self.startup_speed
        } else {
            &self.speed
        };
        let mut arrived = true;
        let out = cur
            .iter_mut()
            .zip(target)
            .zip(speeds)
            .zip(&self.range)
            .map(|(((c, &t), &v), &(lo, hi))| {
                // A command beyond the range is where the range ends: the
                // start-up move arrives there instead of chasing it forever.
                let t = f64::from(t.clamp(lo, hi));
                let max = v * dt;
                *c += (t - *c).clamp(-max, max);
                *c = c.clamp(f64::from(lo), f64::from(hi));
                if (t - *c).abs() > 0.5 {
                    arrived = false;
                }
                (c.round() as i32).clamp(lo, hi)
            })
            .collect();
        if arrived {
            self.starting = false;
        }
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Chain;
    use crate::servo::calibration::Calibration;

    fn load(config: &str) -> Calibration {
        let root = env!("CARGO_MANIFEST_DIR");
        let chain = Chain::from_urdf_file(format!("{root}/urdf/arm.urdf"), None, None).unwrap();
        Calibration::load(format!("{root}/{config}"), &chain).unwrap()
    }

    fn cal() -> Calibration {
        load("config/servos_feetech.yaml")
    }

    #[test]
    fn start_up_move_is_slow_then_joint_speed() {
        let c = cal();
        let n = c.joints.len();
        let mut r = Ramp::new(&c.joints, 0.3);
        assert_eq!(r.step(None, 0.02), None, "nothing before a command");
        let mut start = vec![2048; n];
        start[0] = 1500;
        r.connected(&StartPose::Measured(start));
        let mut target = vec![2048; n];
        target[0] = 2500;
        let per_tick = 0.3 * c.joints[0].scale * 0.02;
        let mut last = 1500.0;
        let mut ticks = 0;
        while r.starting() {
            let out = r.step(Some(&target), 0.02).unwrap();
            let x = f64::from(out[0]);
            assert!(x - last <= per_tick + 1.0, "{x} after {last}");
            last = x;
            ticks += 1;
            assert!(ticks < 10_000);
        }
        assert_eq!(last, 2500.0);
        // After arriving, the joint speed limit (3 rad/s) applies.
        target[0] = 1500;
        let out = r.step(Some(&target), 0.02).unwrap();
        let fast = 3.0 * c.joints[0].scale * 0.02;
        assert!((f64::from(2500 - out[0]) - fast).abs() <= 1.0);
    }

    #[test]
    fn hobby_servos_start_from_the_park_pose_on_the_first_connection_only() {
        let mut c = load("config/servos_pwm.yaml");
        let target: Vec<i32> = c.joints.iter().map(|j| j.zero as i32 + 300).collect();
        // Without a park pose the first command goes out as it is.
        let mut r = Ramp::new(&c.joints, 0.3);
        r.connected(&StartPose::Unknown);
        assert!(!r.starting());
        assert_eq!(r.step(Some(&target), 0.02).unwrap(), target);

        for j in &mut c.joints {
            j.park = Some(0.0);
        }
        let park = c.park_commands().unwrap();
        let mut r = Ramp::new(&c.joints, 0.3);
        r.connected(&StartPose::Unknown);
        assert!(r.starting());
        let mut last = park.clone();
        let mut ticks = 0;
        while r.starting() {
            let out = r.step(Some(&target), 0.02).unwrap();
            for ((o, l), j) in out.iter().zip(&last).zip(&c.joints) {
                let step = f64::from((o - l).abs());
                assert!(step <= 0.3 * j.scale * 0.02 + 1.0, "{out:?} after {last:?}");
            }
            last = out;
            ticks += 1;
            assert!(ticks < 10_000);
        }
        assert_eq!(last, target);
        // A reconnection (the board was replugged) resumes from the pose
        // reached, not from the park pose: nothing to ramp.
        r.connected(&StartPose::Unknown);
        assert!(!r.starting());
        assert_eq!(r.step(Some(&target), 0.02).unwrap(), target);
    }

    #[test]
    fn resuming_hobby_servos_starts_from_the_park_pose_else_the_last_output() {
        let mut c = load("config/servos_pwm.yaml");
        // Within every joint's range (the gripper's zero is an end stop).
        let before: Vec<i32> = c
            .joints
            .iter()
            .map(|j| (j.zero as i32 - 200).clamp(j.min, j.max))
            .collect();
        let target: Vec<i32> = c
            .joints
            .iter()
            .map(|j| (j.zero as i32 + 200).clamp(j.min, j.max))
            .collect();
        let per_tick = |j: &JointMap| 0.3 * j.scale * 0.02 + 1.0;
        // No park pose: from the last output, slowly.
        let mut r = Ramp::new(&c.joints, 0.3);
        r.connected(&StartPose::Commanded(before.clone()));
        while r.starting() {
            r.step(Some(&before), 0.02);
        }
        r.resumed(&StartPose::Unknown);
        assert!(r.starting());
        let out = r.step(Some(&target), 0.02).unwrap();
        for ((o, b), j) in out.iter().zip(&before).zip(&c.joints) {
            assert!(f64::from((o - b).abs()) <= per_tick(j), "{out:?}");
        }
        // With a park pose: from there.
        for j in &mut c.joints {
            j.park = Some(0.0);
        }
        let park = c.park_commands().unwrap();
        let mut r = Ramp::new(&c.joints, 0.3);
        r.connected(&StartPose::Commanded(before.clone()));
        r.resumed(&StartPose::Unknown);
        let out = r.step(Some(&target), 0.02).unwrap();
        for ((o, p), j) in out.iter().zip(&park).zip(&c.joints) {
            assert!(f64::from((o - p).abs()) <= per_tick(j), "{out:?}");
        }
    }

    #[test]
    fn a_command_beyond_the_range_ends_the_start_up_move_at_the_range() {
        let c = cal();
        let n = c.joints.len();
        let mut r = Ramp::new(&c.joints, 0.3);
        r.connected(&StartPose::Measured(vec![2048; n]));
        let beyond: Vec<i32> = c.joints.iter().map(|j| j.max + 500).collect();
        let mut steps = 0;
        while r.starting() {
            r.step(Some(&beyond), 0.02).unwrap();
            steps += 1;
            assert!(steps < 100_000, "the start-up move never ended");
        }
        let out = r.step(Some(&beyond), 0.02).unwrap();
        let ends: Vec<i32> = c.joints.iter().map(|j| j.max).collect();
        assert_eq!(out, ends);
    }

    #[test]
    fn present_outside_range_is_brought_into_it() {
        let c = cal();
        let n = c.joints.len();
        let mut r = Ramp::new(&c.joints, 0.3);
        let mut start = vec![2048; n];
        start[0] = 0;
        r.connected(&StartPose::Measured(start));
        let out = r.step(Some(&vec![2048; n]), 0.02).unwrap();
        let per_tick = 0.3 * c.joints[0].scale * 0.02;
        let min = c.joints[0].min;
        assert!(
            out[0] >= min && f64::from(out[0] - min) <= per_tick + 1.0,
            "{} from below {min}",
            out[0]
        );
    }
}
