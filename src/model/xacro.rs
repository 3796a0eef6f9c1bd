//! Unexpanded xacro. Most ROS arm descriptions ship as `.urdf.xacro`
//! macros that the `xacro` tool expands into URDF. Read as URDF, such a file
//! loses every `<xacro:...>` element (so the robot has no links, or only
//! `world`) or has `${...}` where a number belongs; this names what gave it
//! away so the error can say how to expand it.
//!
//! The `xmlns:xacro` declaration alone is not a sign: the expanded URDFs
//! many packages ship still carry it on `<robot>`.

use super::ModelError;
use super::urdf_text::{Item, items};
use std::path::Path;

/// Refuses xacro: a file named `*.xacro`, an element in the xacro
/// namespace, or a `${...}` / `$(...)` substitution outside comments.
/// `file` is the path when the text came from one (it goes into the
/// suggested command).
pub(crate) fn refuse_unexpanded(
    xml: &str,
    source: &str,
    file: Option<&Path>,
) -> Result<(), ModelError> {
    let named_xacro = file.is_some_and(|f| f.extension().is_some_and(|e| e == "xacro"));
    let sign = if named_xacro {
        Some("the file name ends in .xacro".to_string())
    } else {
        first_sign(xml)
    };
    match sign {
        None => Ok(()),
        Some(sign) => Err(ModelError::UnexpandedXacro {
            source_name: source.to_owned(),
            sign,
            file: file.map(|f| f.display().to_string()),
        }),
    }
}

/// The first xacro element or substitution, described with its line.
fn first_sign(xml: &str) -> Option<String> {
    // Prefixes bound to the xacro namespace, besides the usual `xacro`.
    let mut prefixes: Vec<&str> = vec!["xacro"];
    for item in items(xml) {
        match item {
            Item::Open(tag) => {
                for (name, value) in &tag.attrs {
                    if let Some(p) = name.strip_prefix("xmlns:")
                        && value.contains("xacro")
                    {
                        prefixes.push(p);
                    }
                }
                if let Some((prefix, _)) = tag.name.split_once(':')
                    && prefixes.contains(&prefix)
                {
                    return Some(format!("line {}: <{}>", tag.line, tag.name));
                }
                if let Some(expr) = tag.attrs.iter().find_map(|(_, v)| substitution(v)) {
                    return Some(format!("line {}: {expr}", tag.line));
                }
            }
            Item::Text(text, line) => {
                if let Some(expr) = substitution(text) {
                    let at = line + text[..text.find(expr).unwrap_or(0)].matches('\n').count();
                    return Some(format!("line {at}: {expr}"));
                }
            }
            Item::Close => {}
        }
    }
    None
}

/// A `${...}` or `$(...)` in `s`, cut to a readable length.
fn substitution(s: &str) -> Option<&str> {
    let start = s.find("${").or_else(|| s.find("$("))?;
    let close = if s[start + 1..].starts_with('{') {
        '}'
    } else {
        ')'
    };
    let end = s[start..]
        .find(close)
        .map_or(s.len(), |i| start + i + 1)
        .min(start + 60);
    let end = (start..=end)
        .rev()
        .find(|&i| s.is_char_boundary(i))
        .unwrap_or(start);
    Some(&s[start..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elements_substitutions_and_other_prefixes_are_signs() {
        let x = "<robot xmlns:xacro=\"http://www.ros.org/wiki/xacro\">\n<xacro:include filename=\"a.xacro\"/>\n</robot>";
        assert_eq!(first_sign(x).unwrap(), "line 2: <xacro:include>");
        let x = "<robot xmlns:x=\"http://wiki.ros.org/xacro\">\n\n<x:macro name=\"m\"/></robot>";
        assert_eq!(first_sign(x).unwrap(), "line 3: <x:macro>");
        let x = "<robot>\n<link name=\"a\">\n<origin xyz=\"0 0 ${len}\"/></link></robot>";
        assert_eq!(first_sign(x).unwrap(), "line 3: ${len}");
        let x = "<robot><link name=\"$(arg prefix)base\"/></robot>";
        assert_eq!(first_sign(x).unwrap(), "line 1: $(arg prefix)");
        let x = "<robot>\n<gazebo>\n<ns>\n  ${prefix}</ns></gazebo></robot>";
        assert_eq!(first_sign(x).unwrap(), "line 4: ${prefix}");
    }

    #[test]
    fn expanded_urdf_with_the_namespace_declared_is_not_xacro() {
        let x = "<robot name=\"r\" xmlns:xacro=\"http://www.ros.org/wiki/xacro\">\n<!-- made from ${name}.xacro -->\n<link name=\"a\"/></robot>";
        assert_eq!(first_sign(x), None);
    }
}
