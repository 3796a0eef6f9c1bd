//! The replay's checks as JUnit XML, the format CI systems (GitLab,
//! Jenkins, GitHub test reporters) show as test results: one test suite,
//! one test case per check, a `<failure>` with the details on each failed
//! one (its listed failures included, so the CI page says which message).

use super::Report;
use super::plot::escape;
use std::fmt::Write;

pub fn junit_xml(r: &Report) -> String {
    let failed = r.checks.iter().filter(|c| !c.passed).count();
    let mut s = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        s,
        r#"<testsuites name="arm_ik replay" tests="{}" failures="{failed}" time="{:.3}">"#,
        r.checks.len(),
        r.wall_s
    );
    let _ = writeln!(
        s,
        r#"  <testsuite name="replay {}" tests="{}" failures="{failed}" errors="0" time="{:.3}">"#,
        escape(&r.bag),
        r.checks.len(),
        r.wall_s
    );
    for c in &r.checks {
        let _ = write!(
            s,
            r#"    <testcase classname="arm_ik.replay" name="{}""#,
            c.name
        );
        if c.passed {
            let _ = writeln!(s, "/>");
            continue;
        }
        let _ = writeln!(s, ">");
        let mut body = String::new();
        let kinds = c.name.failure_kinds();
        for f in r
            .failures
            .iter()
            .filter(|f| kinds.contains(&f.kind))
            .take(50)
        {
            let _ = writeln!(
                body,
                "message {} at {} ns: {}: {}",
                f.index, f.log_time_ns, f.kind, f.detail
            );
        }
        let tick_kind = c.name.limit_kind();
        for f in r
            .tick_failures
            .iter()
            .filter(|f| Some(f.kind) == tick_kind)
            .take(50)
        {
            let _ = writeln!(
                body,
                "tick {} at {:.3} s: {} {} = {} (limit {})",
                f.tick, f.time_s, f.joint, f.kind, f.value, f.limit
            );
        }
        let _ = writeln!(
            s,
            r#"      <failure message="{}">{}</failure>"#,
            escape(&c.detail),
            escape(&body)
        );
        let _ = writeln!(s, "    </testcase>");
    }
    s.push_str("  </testsuite>\n</testsuites>\n");
    s
}
