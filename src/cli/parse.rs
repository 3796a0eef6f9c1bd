//! Parsing of the small value lists the commands take.

use super::values;

/// Parses `N` comma-separated finite numbers, e.g. `0.1,-0.2,0.3`.
pub fn numbers<const N: usize>(s: &str) -> Result<[f64; N], String> {
    let v = number_list(s)?;
    v.try_into().map_err(|v: Vec<f64>| {
        format!(
            "expected {N} comma-separated numbers, got {} in '{s}'",
            v.len()
        )
    })
}

/// Parses comma-separated finite numbers, each at most 1e6 in size (see
/// [`values::finite`]).
pub fn number_list(s: &str) -> Result<Vec<f64>, String> {
    s.split(',')
        .map(|p| values::finite(p).map_err(|e| format!("{e} (in '{s}')")))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_parse_and_bad_values_are_named() {
        assert_eq!(numbers::<3>("0.1,-0.2, 3").unwrap(), [0.1, -0.2, 3.0]);
        assert!(numbers::<3>("1,2").unwrap_err().contains("expected 3"));
        assert!(
            numbers::<3>("1,nan,2")
                .unwrap_err()
                .contains("'nan' is not finite")
        );
        assert!(
            number_list("1,x")
                .unwrap_err()
                .contains("'x' is not a number")
        );
    }
}
