//! The string formats (`format:`) the API server checks: date-time, date, byte, ipv4, ipv6, cidr and uuid.
//! Any other format is accepted, as the server accepts it.

use base64::Engine as _;

use super::go_regex::compiled;

/// What `text` should have been for a string format the server checks; formats it does not know are ignored.
pub(super) fn string_format_problem(format: &str, text: &str) -> Option<&'static str> {
    let ok = match format {
        "date-time" | "datetime" => is_date_time(text),
        "date" => is_date(text),
        "byte" => base64::prelude::BASE64_STANDARD.decode(text).is_ok(),
        "ipv4" => text.parse::<std::net::Ipv4Addr>().is_ok(),
        "ipv6" => text.parse::<std::net::Ipv6Addr>().is_ok(),
        "cidr" => text.parse::<ipnet::IpNet>().is_ok(),
        "uuid" => compiled("^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$")
            .is_ok_and(|uuid| uuid.is_match(text)),
        _ => return None,
    };
    let expected = match format {
        "date-time" | "datetime" => "an RFC 3339 date-time such as 2025-01-31T12:00:00Z",
        "date" => "a date such as 2025-01-31",
        "byte" => "base64-encoded",
        "ipv4" => "an IPv4 address",
        "ipv6" => "an IPv6 address",
        "cidr" => "a CIDR such as 10.0.0.0/16",
        _ => "a UUID",
    };
    (!ok).then_some(expected)
}

fn is_date(text: &str) -> bool {
    let parts: Vec<&str> = text.split('-').collect();
    let [year, month, day] = parts.as_slice() else { return false };
    let digits = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_digit());
    if !(digits(year, 4) && digits(month, 2) && digits(day, 2)) {
        return false;
    }
    let (Ok(year), Ok(month), Ok(day)) = (year.parse::<i32>(), month.parse::<u8>(), day.parse::<u8>()) else {
        return false;
    };
    time::Month::try_from(month).is_ok_and(|month| time::Date::from_calendar_date(year, month, day).is_ok())
}

/// RFC 3339 and the reduced forms the server's date-time parser also takes (no seconds, no zone).
fn is_date_time(text: &str) -> bool {
    let Ok(shape) =
        compiled(r"^(\d{4}-\d{2}-\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(?:[Zz]|[+-]\d{2}:?\d{2})?$")
    else {
        return false;
    };
    let Some(parts) = shape.captures(text) else { return false };
    let number = |i: usize| parts.get(i).map_or(Ok(0), |m| m.as_str().parse::<u8>());
    let (Ok(hour), Ok(minute), Ok(second)) = (number(2), number(3), number(4)) else { return false };
    is_date(&parts[1]) && hour < 24 && minute < 60 && second <= 60
}
