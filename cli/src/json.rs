//! The little JSON the commands print (`pick --json`, `bench --json`), written by hand.

/// `s` as a JSON string literal.
pub fn string(s: &str) -> String {
    let mut out = String::from("\"");
    for ch in s.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// `x` as a JSON number, `null` when it is not finite (JSON has no NaN or infinity).
pub fn number(x: f32) -> String {
    if x.is_finite() {
        format!("{x}")
    } else {
        "null".into()
    }
}

/// `v` as a JSON array of numbers.
pub fn array(v: &[f32]) -> String {
    let parts: Vec<String> = v.iter().map(|&x| number(x)).collect();
    format!("[{}]", parts.join(","))
}

#[cfg(test)]
mod tests {
    #[test]
    fn strings_and_numbers_are_valid_json() {
        assert_eq!(super::string("a\"b\\c\n"), r#""a\"b\\c\u000a""#);
        assert_eq!(super::array(&[1.5, f32::NAN, -0.0]), "[1.5,null,-0]");
    }
}
