//! What the wizard shows and how the person answers: a full-screen view
//! (ratatui) on a terminal, plain prompts one a line otherwise (a pipe, a
//! script, a serial console).

use ratatui::crossterm::event::{self, Event, KeyCode, KeyEventKind, KeyModifiers};
use ratatui::layout::{Constraint, Layout};
use ratatui::style::{Modifier, Style};
use ratatui::widgets::{Block, Paragraph, Row as TableRow, Table, Wrap};
use std::io::{BufRead, Write};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::Duration;

/// One joint's line.
pub struct Row {
    pub joint: String,
    pub output: u16,
    /// Servo units (ticks, µs), once known.
    pub units: Option<i32>,
    /// In the URDF's radians (or metres), when a calibration tells.
    pub angle: Option<f64>,
    pub limits: (f64, f64),
    /// The joint the question is about.
    pub current: bool,
}

/// Everything on the screen at one moment.
pub struct View<'a> {
    pub title: &'a str,
    pub rows: Vec<Row>,
    /// Lines above the question (the zero pose, a summary).
    pub lines: &'a [String],
    pub ask: &'a str,
    pub keys: &'a str,
    /// What went wrong with the last answer.
    pub note: Option<&'a str>,
}

/// One answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Input {
    Enter,
    /// Step the pulse by this much (hobby servos).
    Step(i32),
    Yes,
    No,
    /// Ctrl-C in the full-screen view (no signal in raw mode), or the
    /// end of the plain input.
    Interrupt,
}

pub trait Ui {
    fn show(&mut self, v: &View) -> anyhow::Result<()>;
    /// The next answer, waiting at most `wait`.
    fn input(&mut self, wait: Duration) -> anyhow::Result<Option<Input>>;
}

/// The full-screen view; the terminal is restored when it is dropped (and
/// on a panic: ratatui's hook).
pub struct Tui {
    term: ratatui::DefaultTerminal,
}

impl Tui {
    pub fn new() -> anyhow::Result<Tui> {
        Ok(Tui {
            term: ratatui::try_init()?,
        })
    }
}

impl Drop for Tui {
    fn drop(&mut self) {
        ratatui::restore();
    }
}

fn table_rows(v: &View) -> Vec<TableRow<'static>> {
    v.rows
        .iter()
        .map(|r| {
            let cells = [
                format!("{}{}", if r.current { "> " } else { "  " }, r.joint),
                r.output.to_string(),
                r.units.map_or("-".into(), |u| u.to_string()),
                r.angle.map_or("-".into(), |a| format!("{a:+.3}")),
                format!("[{:+.3}, {:+.3}]", r.limits.0, r.limits.1),
            ];
            let row = TableRow::new(cells);
            if r.current {
                row.style(Style::default().add_modifier(Modifier::BOLD))
            } else {
                row
            }
        })
        .collect()
}

impl Ui for Tui {
    fn show(&mut self, v: &View) -> anyhow::Result<()> {
        self.term.draw(|f| {
            let n = v.rows.len() as u16 + 3;
            let [top, mid, bottom] = Layout::vertical([
                Constraint::Length(n),
                Constraint::Min(3),
                Constraint::Length(4),
            ])
            .areas(f.area());
            let header = TableRow::new(["joint", "output", "units", "rad", "URDF limits"])
                .style(Style::default().add_modifier(Modifier::UNDERLINED));
            let widths = [
                Constraint::Length(22),
                Constraint::Length(7),
                Constraint::Length(7),
                Constraint::Length(8),
                Constraint::Length(18),
            ];
            let table = Table::new(table_rows(v), widths)
                .header(header)
                .block(Block::bordered().title(v.title));
            f.render_widget(table, top);
            let text = v.lines.join("\n");
            f.render_widget(
                Paragraph::new(text)
                    .wrap(Wrap { trim: false })
                    .block(Block::bordered()),
                mid,
            );
            let ask = match v.note {
                Some(note) => format!("{note}\n{}\n{}", v.ask, v.keys),
                None => format!("{}\n{}", v.ask, v.keys),
            };
            f.render_widget(Paragraph::new(ask).wrap(Wrap { trim: false }), bottom);
        })?;
        Ok(())
    }

    fn input(&mut self, wait: Duration) -> anyhow::Result<Option<Input>> {
        if !event::poll(wait)? {
            return Ok(None);
        }
        let Event::Key(k) = event::read()? else {
            return Ok(None);
        };
        if k.kind != KeyEventKind::Press {
            return Ok(None);
        }
        let big = if k.modifiers.contains(KeyModifiers::SHIFT) {
            10
        } else {
            1
        };
        Ok(match k.code {
            KeyCode::Char('c') if k.modifiers.contains(KeyModifiers::CONTROL) => {
                Some(Input::Interrupt)
            }
            KeyCode::Enter => Some(Input::Enter),
            KeyCode::Right | KeyCode::Char('+') => Some(Input::Step(10 * big)),
            KeyCode::Left | KeyCode::Char('-') => Some(Input::Step(-10 * big)),
            KeyCode::Up => Some(Input::Step(1)),
            KeyCode::Down => Some(Input::Step(-1)),
            KeyCode::PageUp => Some(Input::Step(100)),
            KeyCode::PageDown => Some(Input::Step(-100)),
            KeyCode::Char('y') => Some(Input::Yes),
            KeyCode::Char('n') => Some(Input::No),
            _ => None,
        })
    }
}

/// Plain prompts: the view printed once per question, answers read a
/// line at a time (empty: Enter; `y`, `n`; `+N`/`-N`: step).
pub struct Plain {
    lines: Receiver<String>,
    last_ask: String,
}

impl Plain {
    pub fn new() -> Plain {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::stdin().lock().lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Plain {
            lines: rx,
            last_ask: String::new(),
        }
    }
}

impl Ui for Plain {
    fn show(&mut self, v: &View) -> anyhow::Result<()> {
        let key = format!("{}{}{:?}", v.ask, v.lines.join(""), v.note);
        if key == self.last_ask {
            return Ok(());
        }
        self.last_ask = key;
        if let Some(note) = v.note {
            outln!("! {note}")?;
        }
        for line in v.lines {
            outln!("{line}")?;
        }
        for r in &v.rows {
            let units = r.units.map_or("-".into(), |u| u.to_string());
            let angle = r.angle.map_or("-".into(), |a| format!("{a:+.3}"));
            outln!(
                "  {}{:<20} {:>4} {:>6} {:>7} [{:+.3}, {:+.3}]",
                if r.current { ">" } else { " " },
                r.joint,
                r.output,
                units,
                angle,
                r.limits.0,
                r.limits.1
            )?;
        }
        outln!("{} ({})", v.ask, v.keys)?;
        super::super::out::stdout().flush()?;
        Ok(())
    }

    fn input(&mut self, wait: Duration) -> anyhow::Result<Option<Input>> {
        let line = match self.lines.recv_timeout(wait) {
            Ok(line) => line,
            Err(RecvTimeoutError::Timeout) => return Ok(None),
            Err(RecvTimeoutError::Disconnected) => return Ok(Some(Input::Interrupt)),
        };
        let t = line.trim();
        Ok(Some(match t {
            "" => Input::Enter,
            "y" | "yes" => Input::Yes,
            "n" | "no" => Input::No,
            _ => match t.parse::<i32>() {
                Ok(n) if t.starts_with(['+', '-']) => Input::Step(n),
                _ => {
                    errln!("arm_ik calibrate: '{t}': answer with Enter, y, n, or +N/-N to step");
                    return Ok(None);
                }
            },
        }))
    }
}
