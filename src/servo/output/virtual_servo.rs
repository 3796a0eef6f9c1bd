//! The virtual servos used when no hardware is configured.

use super::ServoOutput;

/// Simulated hobby servos: each follows its command with a first-order lag
/// and a speed limit, like a position-controlled RC servo, so the simulation
/// shows the same lag a real arm would.
#[derive(Debug, Clone)]
pub struct VirtualServo {
    position: Vec<f64>,
    command: Vec<f64>,
    last_t: Option<f64>,
    /// Maximum speed per joint (rad/s or m/s).
    pub max_speed: Vec<f64>,
    /// Time constant of the lag (s).
    pub time_constant: f64,
    /// Limp: commands are ignored and the servos stay where they are
    /// (a relaxed arm resting on its joints, as a simulation can show it).
    relaxed: bool,
}

impl VirtualServo {
    /// Default time constant: a loaded MG996R-class servo settles small
    /// steps in roughly 0.1 s (two time constants).
    pub const DEFAULT_TIME_CONSTANT: f64 = 0.05;
    /// Default speed: 0.17 s per 60 degrees, the MG996R datasheet figure.
    pub const DEFAULT_SPEED: f64 = 6.16;

    /// Servos resting at `initial`.
    pub fn new(initial: Vec<f64>) -> VirtualServo {
        let n = initial.len();
        VirtualServo {
            command: initial.clone(),
            position: initial,
            last_t: None,
            max_speed: vec![Self::DEFAULT_SPEED; n],
            time_constant: Self::DEFAULT_TIME_CONSTANT,
            relaxed: false,
        }
    }

    /// Advances the simulated servos to time `t` under the current command:
    /// the exact solution of the lag over the interval, then the speed limit.
    fn advance(&mut self, t: f64) {
        let h = match self.last_t {
            Some(t0) if t > t0 => t - t0,
            _ => 0.0,
        };
        self.last_t = Some(self.last_t.map_or(t, |t0| t0.max(t)));
        if h == 0.0 {
            return;
        }
        let decay = if self.time_constant > 0.0 {
            (-h / self.time_constant).exp()
        } else {
            0.0
        };
        for ((p, &c), &vmax) in self
            .position
            .iter_mut()
            .zip(&self.command)
            .zip(&self.max_speed)
        {
            let lagged = c + (*p - c) * decay;
            let step = (lagged - *p).clamp(-vmax * h, vmax * h);
            *p += step;
        }
    }
}

impl ServoOutput for VirtualServo {
    fn command(&mut self, positions: &[f64], t: f64) {
        self.advance(t);
        if self.relaxed {
            return;
        }
        for (c, &p) in self.command.iter_mut().zip(positions) {
            if p.is_finite() {
                *c = p;
            }
        }
    }

    fn feedback(&self) -> Option<Vec<f64>> {
        Some(self.position.clone())
    }

    fn link(&self) -> &str {
        "virtual"
    }

    fn relax(&mut self) {
        self.relaxed = true;
        // Limp where they are: the lag toward the last command stops.
        self.command.clone_from(&self.position);
    }

    fn enable(&mut self) {
        self.relaxed = false;
    }

    fn relaxed(&self) -> bool {
        self.relaxed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lags_and_respects_speed() {
        let mut s = VirtualServo::new(vec![0.0]);
        s.command(&[1.0], 0.0);
        s.command(&[1.0], 0.05);
        let p = s.feedback().unwrap()[0];
        // Lag alone would give 1 - e^-1 = 0.63; the speed limit allows 0.31.
        assert!(
            (p - VirtualServo::DEFAULT_SPEED * 0.05).abs() < 1e-12,
            "{p}"
        );
        for k in 2..100 {
            s.command(&[1.0], k as f64 * 0.05);
        }
        assert!((s.feedback().unwrap()[0] - 1.0).abs() < 1e-6);
    }

    #[test]
    fn relaxed_servos_stay_where_they_are_until_enabled() {
        let mut s = VirtualServo::new(vec![0.0]);
        s.command(&[1.0], 0.0);
        s.command(&[1.0], 0.05);
        let at = s.feedback().unwrap()[0];
        s.relax();
        assert!(s.relaxed());
        for k in 2..20 {
            s.command(&[-1.0], k as f64 * 0.05);
        }
        assert_eq!(s.feedback().unwrap()[0], at, "limp: no command moves it");
        s.enable();
        s.command(&[-1.0], 1.0);
        s.command(&[-1.0], 1.05);
        assert!(s.feedback().unwrap()[0] < at, "holding again: it follows");
    }
}
