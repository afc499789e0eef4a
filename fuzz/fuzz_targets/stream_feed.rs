//! Any bytes, split anywhere, fed to every stream format: never a panic, and the aggregate (the
//! whole `StreamAggregator::result()` shape and every tool call's arguments) never depends on how
//! the input was split.
#![no_main]

use _core::stream::{Limits, StreamAggregator, SUPPORTED_FORMATS};
use libfuzzer_sys::fuzz_target;

fn run(format: &str, pieces: &[&[u8]], limits: Limits) -> (usize, String) {
    let mut agg = StreamAggregator::new(format).expect("known format");
    agg.set_limits(limits);
    let mut outcomes = 0;
    for p in pieces {
        agg.feed(p, &mut |_, _| outcomes += 1);
    }
    agg.finish(&mut |_, _| outcomes += 1);
    let calls = agg.result().tool_calls.len();
    let arguments: Vec<_> = (0..calls)
        .map(|i| agg.call_arguments(i).map(|(a, whole, _)| (a.to_string(), whole)))
        .collect();
    (outcomes, format!("{:?}\u{0}{arguments:?}", agg.result()))
}

fuzz_target!(|data: &[u8]| {
    let Some((&head, body)) = data.split_first() else { return };
    let format = SUPPORTED_FORMATS[usize::from(head) % SUPPORTED_FORMATS.len()];
    let limits = Limits {
        max_event_bytes: if head & 0x80 != 0 { 64 } else { 1 << 20 },
        max_total_bytes: 1 << 20,
        replace_invalid_utf8: head & 0x40 != 0,
        max_depth: if head & 0x20 != 0 { 2 } else { 200 },
    };
    let cut = if body.is_empty() { 0 } else { usize::from(head) * 7 % body.len() };
    let whole = run(format, &[body], limits);
    let split = run(format, &[&body[..cut], &body[cut..]], limits);
    if limits.max_event_bytes > body.len() {
        // With no size limit in play, splitting must not change the aggregate.
        assert_eq!(whole.1, split.1);
    }
});
