// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package otlpfile

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// checkExisting returns where the complete records of an existing
// capture file end (0 for none or no file) and a note on what it found.
func checkExisting(path string, gz, asJSON bool) (int64, string, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, "", nil
	}
	if err != nil {
		return 0, "", err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || fi.Size() == 0 {
		return 0, "", err
	}
	var size int64
	if gz {
		size, err = gzipEnd(f, asJSON)
	} else {
		sc := &recordScanner{json: asJSON}
		if _, err = io.Copy(sc, bufio.NewReaderSize(f, 1<<20)); err == nil {
			size, err = sc.end, sc.check(true)
		}
	}
	if err != nil {
		return 0, "", err
	}
	note := fmt.Sprintf("appending to the %d bytes already there", size)
	if size < fi.Size() {
		note += fmt.Sprintf("; %d bytes after them, a record cut short (a capture stopped while writing it, so never acknowledged), are cut off", fi.Size()-size)
	}
	return size, note, nil
}

// gzipEnd walks the gzip members of f: the complete ones must end at a
// record boundary. A last member cut short, in its header, its data or
// its trailer, is dropped, as a kill inside a write leaves it: a capture
// writes one request per member and acknowledges it once the member is
// whole. Only a first member cut after complete records is refused: that
// is a file written as one gzip stream, not by a capture, and cutting it
// would lose all of it.
func gzipEnd(f io.Reader, asJSON bool) (int64, error) {
	cr := &byteCounter{r: bufio.NewReaderSize(f, 1<<20)}
	zr, err := gzip.NewReader(cr)
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return 0, nil // the first member's header, cut short
	}
	if err != nil {
		return 0, fmt.Errorf("not gzip (%w): give --out a name without .gz, or another file", err)
	}
	sc := &recordScanner{json: asJSON}
	var end int64
	for {
		zr.Multistream(false)
		before := sc.complete
		_, err := io.Copy(sc, zr)
		if errors.Is(err, io.ErrUnexpectedEOF) && (end > 0 || sc.complete == before) {
			return end, sc.check(false)
		}
		if err != nil {
			return 0, fmt.Errorf("gzip member at byte %d: %w: not appending to it", end, err)
		}
		if err := sc.check(true); err != nil {
			return 0, err
		}
		end = cr.n
		if err := zr.Reset(cr); errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return end, nil // no further member, or one whose header is cut short
		} else if err != nil {
			return 0, fmt.Errorf("gzip member at byte %d: %w: not appending to it", end, err)
		}
	}
}

// byteCounter counts what gzip consumes; as an io.ByteReader it keeps
// gzip from reading ahead, so the count is where a member ends.
type byteCounter struct {
	r *bufio.Reader
	n int64
}

func (b *byteCounter) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.n += int64(n)
	return n, err
}

func (b *byteCounter) ReadByte() (byte, error) {
	c, err := b.r.ReadByte()
	if err == nil {
		b.n++
	}
	return c, err
}

// recordScanner follows the records of a capture file written to it
// without keeping them: where the last complete one ends, and whether the
// file starts as the format written.
type recordScanner struct {
	json     bool
	head     []byte // the first bytes, for the format check
	off, end int64  // bytes seen; the end of the last complete record
	complete int
	need     int64 // length-prefixed: bytes left of the current message
	prefix   []byte
	tail     []byte // the start of the bytes after end
}

func (s *recordScanner) Write(p []byte) (int, error) {
	if len(s.head) < 4096 {
		s.head = append(s.head, p[:min(len(p), 4096-len(s.head))]...)
	}
	if s.json {
		s.scanLines(p)
	} else if err := s.scanDelimited(p); err != nil {
		return 0, err
	}
	return len(p), nil
}

// scanLines follows OTLP/JSON lines: a record ends at a newline. The
// offset advances by the whole of p, whatever part of it follows the last
// newline: p is one read of many (1 MiB from a file, 32 KiB from gzip).
func (s *recordScanner) scanLines(p []byte) {
	at := s.off
	s.off += int64(len(p))
	if i := bytes.LastIndexByte(p, '\n'); i >= 0 {
		s.complete += bytes.Count(p, []byte{'\n'})
		s.end = at + int64(i) + 1
		s.tail = s.tail[:0]
		p = p[i+1:]
	}
	if len(s.tail) < 64 {
		s.tail = append(s.tail, p[:min(len(p), 64-len(s.tail))]...)
	}
}

func (s *recordScanner) scanDelimited(p []byte) error {
	for len(p) > 0 {
		if s.need == 0 && len(s.prefix) < 4 {
			k := min(4-len(s.prefix), len(p))
			s.prefix = append(s.prefix, p[:k]...)
			s.off, p = s.off+int64(k), p[k:]
			if len(s.prefix) == 4 {
				n := binary.BigEndian.Uint32(s.prefix)
				if n > MaxRecordBytes {
					return fmt.Errorf("message at byte %d: length %d over %d: not a length-prefixed file", s.off-4, n, MaxRecordBytes)
				}
				s.need = int64(n)
				s.recordDone()
			}
			continue
		}
		k := min(s.need, int64(len(p)))
		s.need -= k
		s.off, p = s.off+k, p[k:]
		s.recordDone()
	}
	return nil
}

func (s *recordScanner) recordDone() {
	if s.need == 0 && len(s.prefix) == 4 {
		s.complete++
		s.end = s.off
		s.prefix = s.prefix[:0]
	}
}

// check says whether the records seen so far can be appended to: the
// format written, and, when whole (a complete file or gzip member), no
// record cut short, or else only one a capture could have left.
func (s *recordScanner) check(whole bool) error {
	if len(s.head) > 0 && s.json && !looksJSON(s.head) {
		return errors.New("not OTLP/JSON lines: drop --json, or write to another file")
	}
	if len(s.head) > 0 && !s.json && !looksDelimited(s.head) {
		return errors.New("not length-prefixed OTLP protobuf: add --json for an OTLP/JSON file, or write to another file")
	}
	if s.end == s.off || !whole {
		return nil
	}
	if s.json && !bytes.HasPrefix(s.tail, []byte(`{"resourceSpans"`)) && len(s.tail) >= len(`{"resourceSpans"`) {
		return fmt.Errorf("ends in %d bytes that are not a complete line: not appending to it", s.off-s.end)
	}
	return nil
}
