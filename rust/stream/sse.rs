//! Incremental Server-Sent Events decoder (WHATWG HTML "event stream interpretation").
//!
//! Input may be split anywhere, including inside a CRLF pair or a UTF-8 character: lines end at
//! CRLF, LF or CR, and only ASCII bytes (`\r`, `\n`, `:`) are ever looked for, so multi-byte
//! characters pass through untouched. Each input byte is scanned once; an incomplete line is
//! carried to the next call.

use std::ops::Range;

use memchr::{memchr, memchr2};

/// One dispatched event: its `event:` type (empty means the default, `message`) and its data,
/// with multi-line `data:` fields joined by `\n`. Both borrow from the decoder or its input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SseEvent<'a> {
    /// The `event:` field, empty if none was given.
    pub event: &'a [u8],
    /// The joined `data:` fields.
    pub data: &'a [u8],
}

/// Streaming SSE decoder. An event whose single `data:` line lies within one `feed` input is
/// handed out straight from that input (no copy); only data that straddles inputs or spans
/// several lines is buffered.
#[derive(Debug, Default)]
pub struct SseDecoder {
    line: Vec<u8>,
    skip_lf: bool,
    seen_first_line: bool,
    data: Vec<u8>,
    /// The event's data is `input[range]` of the current `feed` call (not yet in `data`).
    data_in_input: Option<Range<usize>>,
    has_data: bool,
    event: Vec<u8>,
    /// NDJSON mode (Ollama): every non-blank line is one event's data.
    ndjson: bool,
    /// Skipping the rest of an event that grew too large (until its end).
    discarding: bool,
}

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Where `part` lies within `whole`, when it is a sub-slice of it (compared by address).
fn range_within(whole: &[u8], part: &[u8]) -> Option<Range<usize>> {
    let start = (part.as_ptr() as usize).checked_sub(whole.as_ptr() as usize)?;
    let end = start.checked_add(part.len())?;
    (end <= whole.len()).then_some(start..end)
}

impl SseDecoder {
    /// A decoder at the start of a stream.
    pub fn new() -> Self {
        Self::default()
    }

    /// A decoder for newline-delimited JSON: each non-blank line is one event (no `event:` type).
    pub fn ndjson() -> Self {
        Self {
            ndjson: true,
            ..Self::default()
        }
    }

    /// Decode `input`, calling `on_event` with every event it completes, in order.
    pub fn feed(&mut self, input: &[u8], on_event: &mut impl FnMut(SseEvent<'_>)) {
        let mut pos = 0;
        if self.skip_lf && !input.is_empty() {
            self.skip_lf = false;
            if input[0] == b'\n' {
                pos = 1;
            }
        }
        while let Some(off) = memchr2(b'\r', b'\n', &input[pos..]) {
            let end = pos + off;
            if self.line.is_empty() {
                self.process_line(input, &input[pos..end], on_event);
            } else {
                if !self.discarding {
                    self.line.extend_from_slice(&input[pos..end]);
                }
                let line = std::mem::take(&mut self.line);
                self.process_line(input, &line, on_event);
                self.line = line;
                self.line.clear();
            }
            pos = end + 1;
            if input[end] == b'\r' {
                match input.get(pos) {
                    Some(b'\n') => pos += 1,
                    Some(_) => {}
                    None => self.skip_lf = true,
                }
            }
        }
        if !self.discarding {
            self.line.extend_from_slice(&input[pos..]);
        }
        self.own_data(input);
    }

    /// Copy data still held in `input` into the decoder (the event continues in a later input).
    fn own_data(&mut self, input: &[u8]) {
        if let Some(range) = self.data_in_input.take() {
            self.data.extend_from_slice(&input[range]);
        }
    }

    /// Bytes held for the event in progress (its unfinished line plus its data so far).
    pub fn buffered(&self) -> usize {
        self.line.len() + self.data.len()
    }

    /// Drop the event in progress and skip the rest of it (up to the blank line; NDJSON: the line).
    pub fn discard_event(&mut self) {
        self.line.clear();
        self.data.clear();
        self.data_in_input = None;
        self.has_data = false;
        self.event.clear();
        self.discarding = true;
    }

    /// End of stream: treat an unterminated last line as complete and dispatch the pending event
    /// even without the closing blank line. Idempotent.
    pub fn finish(&mut self, on_event: &mut impl FnMut(SseEvent<'_>)) {
        if !self.line.is_empty() {
            let line = std::mem::take(&mut self.line);
            self.process_line(&[], &line, on_event);
        }
        self.skip_lf = false;
        self.dispatch(&[], on_event);
    }

    /// Handle one line; `input` is the current `feed` input (the line may or may not lie in it).
    fn process_line(
        &mut self,
        input: &[u8],
        mut line: &[u8],
        on_event: &mut impl FnMut(SseEvent<'_>),
    ) {
        if self.discarding {
            if self.ndjson || line.is_empty() {
                self.discarding = false;
            }
            return;
        }
        if !self.seen_first_line {
            self.seen_first_line = true;
            if let Some(rest) = line.strip_prefix(BOM) {
                line = rest;
            }
        }
        if self.ndjson {
            if line.iter().any(|b| !b.is_ascii_whitespace()) {
                on_event(SseEvent {
                    event: b"",
                    data: line,
                });
            }
            return;
        }
        if line.is_empty() {
            self.dispatch(input, on_event);
            return;
        }
        if line[0] == b':' {
            return;
        }
        let (field, value) = match memchr(b':', line) {
            Some(c) => {
                let v = &line[c + 1..];
                (&line[..c], v.strip_prefix(b" ").unwrap_or(v))
            }
            None => (line, &b""[..]),
        };
        match field {
            b"data" => self.add_data(input, value),
            b"event" => {
                self.event.clear();
                self.event.extend_from_slice(value);
            }
            _ => {} // id, retry and unknown fields are ignored
        }
    }

    fn add_data(&mut self, input: &[u8], value: &[u8]) {
        if !self.has_data {
            self.has_data = true;
            if let Some(range) = range_within(input, value) {
                self.data_in_input = Some(range);
                return;
            }
        } else {
            self.own_data(input);
            self.data.push(b'\n');
        }
        self.data.extend_from_slice(value);
    }

    fn dispatch(&mut self, input: &[u8], on_event: &mut impl FnMut(SseEvent<'_>)) {
        if self.has_data {
            let data = match self.data_in_input.take() {
                Some(range) => &input[range],
                None => &self.data[..],
            };
            on_event(SseEvent {
                event: &self.event,
                data,
            });
            self.data.clear();
            self.has_data = false;
        }
        self.event.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type Owned = (Vec<u8>, Vec<u8>);

    fn collect(out: &mut Vec<Owned>) -> impl FnMut(SseEvent<'_>) + '_ {
        |e| out.push((e.event.to_vec(), e.data.to_vec()))
    }

    fn decode_all(pieces: &[&[u8]]) -> Vec<Owned> {
        let mut d = SseDecoder::new();
        let mut out = Vec::new();
        for p in pieces {
            d.feed(p, &mut collect(&mut out));
        }
        d.finish(&mut collect(&mut out));
        out
    }

    fn ev(event: &str, data: &str) -> Owned {
        (event.as_bytes().to_vec(), data.as_bytes().to_vec())
    }

    #[test]
    fn line_endings_and_fields() {
        let stream: &[u8] = b"\xEF\xBB\xBFdata: a\r\ndata:b\r\rid: 1\nretry: 5\n: comment\nevent: error\ndata: {}\n\ndata\n\nevent: x\n\n";
        let want = vec![ev("", "a\nb"), ev("error", "{}"), ev("", "")];
        assert_eq!(decode_all(&[stream]), want);
        for i in 0..=stream.len() {
            assert_eq!(
                decode_all(&[&stream[..i], &stream[i..]]),
                want,
                "split at {i}"
            );
        }
        let bytes: Vec<&[u8]> = stream.chunks(1).collect();
        assert_eq!(decode_all(&bytes), want);
    }

    #[test]
    fn finish_flushes_and_is_idempotent() {
        let mut d = SseDecoder::new();
        let mut out = Vec::new();
        d.feed(b"data: x", &mut collect(&mut out));
        assert!(out.is_empty());
        d.finish(&mut collect(&mut out));
        d.finish(&mut collect(&mut out));
        assert_eq!(out, vec![ev("", "x")]);
    }

    #[test]
    fn cr_split_from_lf() {
        assert_eq!(
            decode_all(&[b"data: 1\r", b"\n\r", b"\n"]),
            vec![ev("", "1")]
        );
    }
}
