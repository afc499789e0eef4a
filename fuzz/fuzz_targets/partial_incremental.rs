//! Any text, cut into fragments of any size, through the incremental partial parser: never a
//! panic, and after every fragment its value (live, or one-shot once the scanner leaves the text
//! to the one-shot parser) and its error are those of the one-shot partial parse of the text so far.
#![no_main]

use _core::incremental::{one_shot_json, Incremental, JsonTree};
use libfuzzer_sys::fuzz_target;

/// Below `serde_json`'s own recursion limit (128), which the one-shot model parses with.
const MAX_DEPTH: usize = 100;

fuzz_target!(|data: &[u8]| {
    let Some((&head, body)) = data.split_first() else { return };
    let Ok(text) = std::str::from_utf8(body) else { return };
    let size = usize::from(head % 16) + 1;
    let (mut paths, mut tree) = (Incremental::default(), JsonTree::default());
    let mut end = 0;
    while end < text.len() {
        end = (end + size).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        let prefix = &text[..end];
        let answer = paths.advance(prefix, MAX_DEPTH, &mut tree, one_shot_json);
        assert_eq!(answer.map(|a| a.into_inner()), one_shot_json(prefix, MAX_DEPTH), "{prefix:?}");
    }
});
