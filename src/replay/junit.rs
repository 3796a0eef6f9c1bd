//! The replay's checks as JUnit XML, the format CI systems (GitLab,
//! Jenkins, GitHub test reporters) show as test results: one test suite,
//! one test case per check, a failure with the details on each failed one
//! (its listed failures included, so the CI page says which message).
//! Written with `quick-junit`, nextest's JUnit writer, so the schema and
//! the XML escaping are the ones those CI systems are known to read.

use super::Report;
use quick_junit::{NonSuccessKind, TestCase, TestCaseStatus, TestSuite};
use std::fmt::Write;
use std::time::Duration;

/// Listed failures shown per failed check.
const LISTED: usize = 50;

/// The JUnit XML of a replay's report.
pub fn junit_xml(r: &Report) -> Result<String, quick_junit::SerializeError> {
    let mut suite = TestSuite::new(format!("replay {}", r.bag));
    suite.set_time(Duration::from_secs_f64(r.wall_s.max(0.0)));
    for c in &r.checks {
        let status = if c.passed {
            TestCaseStatus::success()
        } else {
            let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
            s.set_message(c.detail.as_str())
                .set_description(failure_text(r, c.name));
            s
        };
        let mut case = TestCase::new(c.name.to_string(), status);
        case.set_classname("arm_ik.replay");
        suite.add_test_case(case);
    }
    let mut report = quick_junit::Report::new("arm_ik replay");
    report.set_time(Duration::from_secs_f64(r.wall_s.max(0.0)));
    report.add_test_suite(suite);
    report.to_string()
}

/// The listed message and tick failures a check fails on, one a line.
fn failure_text(r: &Report, check: super::CheckName) -> String {
    let mut body = String::new();
    let kinds = check.failure_kinds();
    for f in (r.failures.iter())
        .filter(|f| kinds.contains(&f.kind))
        .take(LISTED)
    {
        let _ = writeln!(
            body,
            "message {} at {} ns: {}: {}",
            f.index, f.log_time_ns, f.kind, f.detail
        );
    }
    let tick_kind = check.limit_kind();
    for f in (r.tick_failures.iter())
        .filter(|f| Some(f.kind) == tick_kind)
        .take(LISTED)
    {
        let _ = writeln!(
            body,
            "tick {} at {:.3} s: {} {} = {} (limit {})",
            f.tick, f.time_s, f.joint, f.kind, f.value, f.limit
        );
    }
    body
}
