//! Any text through the strict, partial and lenient argument parsers (the readings and their order in
//! `json::modes`): never a panic; a text strict mode accepts reads the same in the other modes; what
//! partial completion or repair produces is checked by the strict parser without crashing.
#![no_main]

use _core::json::{locate_error, parse_arguments, parse_arguments_mode, partial, Mode, MAX_DEPTH};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let strict = parse_arguments(data);
    let _ = locate_error(data);
    for mode in [Mode::Partial, Mode::Lenient] {
        let other = parse_arguments_mode(data, mode, MAX_DEPTH);
        if let Ok(object) = &strict {
            assert_eq!(other.as_ref().ok(), Some(object), "{mode:?} reads a strict object differently");
        }
    }
    let _ = parse_arguments_mode(data, Mode::Lenient, 3);
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Some(done) = partial::complete_partial(text) {
        let _ = parse_arguments(done.as_bytes());
        // A completed text is itself a valid prefix: completing it again changes nothing.
        if locate_error(done.as_bytes()).is_none() {
            assert_eq!(partial::complete_partial(&done).as_deref(), Some(done.as_str()));
        }
    }
    for (_, fixed) in partial::repair(text).unwrap_or_default() {
        let _ = parse_arguments(fixed.as_bytes());
    }
});
