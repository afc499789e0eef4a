//! Incremental Server-Sent Events decoder (WHATWG HTML "event stream interpretation").
//!
//! Input may be split anywhere, including inside a CRLF pair or a UTF-8 character: lines end at
//! CRLF, LF or CR, and only ASCII bytes (`\r`, `\n`, `:`) are ever looked for, so multi-byte
//! characters pass through untouched. Each input byte is scanned once; an incomplete line is
//! carried to the next call.

use memchr::{memchr, memchr2};

/// One dispatched event: its `event:` type (empty means the default, `message`) and its data,
/// with multi-line `data:` fields joined by `\n`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SseEvent {
    /// The `event:` field, empty if none was given.
    pub event: Vec<u8>,
    /// The joined `data:` fields.
    pub data: Vec<u8>,
}

/// Streaming SSE decoder.
#[derive(Debug, Default)]
pub struct SseDecoder {
    line: Vec<u8>,
    skip_lf: bool,
    seen_first_line: bool,
    data: Vec<u8>,
    has_data: bool,
    event: Vec<u8>,
    /// NDJSON mode (Ollama): every non-blank line is one event's data.
    ndjson: bool,
    /// Skipping the rest of an event that grew too large (until its end).
    discarding: bool,
}

const BOM: &[u8] = b"\xEF\xBB\xBF";

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

    /// Decode `input`, appending every event it completes to `out`.
    pub fn feed(&mut self, input: &[u8], out: &mut Vec<SseEvent>) {
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
                self.process_line(&input[pos..end], out);
            } else {
                if !self.discarding {
                    self.line.extend_from_slice(&input[pos..end]);
                }
                let line = std::mem::take(&mut self.line);
                self.process_line(&line, out);
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
    }

    /// Bytes held for the event in progress (its unfinished line plus its data so far).
    pub fn buffered(&self) -> usize {
        self.line.len() + self.data.len()
    }

    /// Drop the event in progress and skip the rest of it (up to the blank line; NDJSON: the line).
    pub fn discard_event(&mut self) {
        self.line.clear();
        self.data.clear();
        self.has_data = false;
        self.event.clear();
        self.discarding = true;
    }

    /// End of stream: treat an unterminated last line as complete and dispatch the pending event
    /// even without the closing blank line. Idempotent.
    pub fn finish(&mut self, out: &mut Vec<SseEvent>) {
        if !self.line.is_empty() {
            let line = std::mem::take(&mut self.line);
            self.process_line(&line, out);
        }
        self.skip_lf = false;
        self.dispatch(out);
    }

    fn process_line(&mut self, mut line: &[u8], out: &mut Vec<SseEvent>) {
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
                out.push(SseEvent {
                    event: Vec::new(),
                    data: line.to_vec(),
                });
            }
            return;
        }
        if line.is_empty() {
            self.dispatch(out);
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
            b"data" => {
                if self.has_data {
                    self.data.push(b'\n');
                }
                self.data.extend_from_slice(value);
                self.has_data = true;
            }
            b"event" => {
                self.event.clear();
                self.event.extend_from_slice(value);
            }
            _ => {} // id, retry and unknown fields are ignored
        }
    }

    fn dispatch(&mut self, out: &mut Vec<SseEvent>) {
        if self.has_data {
            out.push(SseEvent {
                event: std::mem::take(&mut self.event),
                data: std::mem::take(&mut self.data),
            });
            self.has_data = false;
        } else {
            self.event.clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_all(pieces: &[&[u8]]) -> Vec<SseEvent> {
        let mut d = SseDecoder::new();
        let mut out = Vec::new();
        for p in pieces {
            d.feed(p, &mut out);
        }
        d.finish(&mut out);
        out
    }

    fn ev(event: &str, data: &str) -> SseEvent {
        SseEvent {
            event: event.as_bytes().to_vec(),
            data: data.as_bytes().to_vec(),
        }
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
        d.feed(b"data: x", &mut out);
        assert!(out.is_empty());
        d.finish(&mut out);
        d.finish(&mut out);
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
