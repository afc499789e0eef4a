//! Any text through the strict, partial and lenient argument parsers: never a panic, and whatever
//! partial completion or repair produces is checked by the strict parser without crashing.
#![no_main]

use _core::json::{locate_error, parse_arguments, partial};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = parse_arguments(data);
    let _ = locate_error(data);
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Some(done) = partial::complete_partial(text) {
        let _ = parse_arguments(done.as_bytes());
        // A completed text is itself a valid prefix: completing it again changes nothing.
        if locate_error(done.as_bytes()).is_none() {
            assert_eq!(partial::complete_partial(&done).as_deref(), Some(done.as_str()));
        }
    }
    if let Some(fixed) = partial::repair(text) {
        let _ = parse_arguments(fixed.as_bytes());
    }
});
