// Copyright The llmslo Authors
// SPDX-License-Identifier: Apache-2.0

package otlpfile

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
)

// ErrLocked is a capture file another process (another llmslo capture)
// has open for writing.
var ErrLocked = errors.New("another process is writing to this file (another llmslo capture?): two captures on one file would each cut it to their own end; stop the other or give --out another file")

// RecordFile is what a CaptureFile writes to: an *os.File opened for
// appending, or a test double.
type RecordFile interface {
	io.Writer
	Truncate(size int64) error
	Sync() error
	Close() error
}

// CaptureFile appends whole records to a file: a length-prefixed protobuf
// message or OTLP/JSON lines per request, and for a .gz file each request
// as its own gzip member. A member per request, rather than one gzip
// stream with a sync flush per request, keeps every acknowledged request
// readable after a kill just the same, and also lets a failed write be
// cut off and the next request start clean: a compressor whose output
// was cut would go on referring to bytes that are not in the file.
type CaptureFile struct {
	mu    sync.Mutex
	f     RecordFile
	gz    bool
	json  bool
	sync  bool
	size  int64 // the end of the last complete record
	dirty bool  // a failed write may have left bytes past size
	zbuf  bytes.Buffer
	zw    *gzip.Writer
}

// NewCaptureFile writes to f, whose complete records end at size.
func NewCaptureFile(f RecordFile, size int64, gz, asJSON, fsync bool) *CaptureFile {
	c := &CaptureFile{f: f, size: size, gz: gz, json: asJSON, sync: fsync}
	if gz {
		c.zw = gzip.NewWriter(&c.zbuf)
	}
	return c
}

// Append writes one record (see encodeRecord) whole, or not at all: on
// an error the file is cut back to the end of the last complete record,
// now or, if that fails too, before the next write.
func (c *CaptureFile) Append(rec []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dirty {
		if err := c.f.Truncate(c.size); err != nil {
			return fmt.Errorf("cutting a partial record: %w", err)
		}
		c.dirty = false
	}
	data := rec
	if c.gz {
		c.zbuf.Reset()
		c.zw.Reset(&c.zbuf)
		_, _ = c.zw.Write(rec) // a bytes.Buffer takes everything
		_ = c.zw.Close()
		data = c.zbuf.Bytes()
	}
	_, err := c.f.Write(data)
	if err == nil && c.sync {
		err = c.f.Sync()
	}
	if err != nil {
		c.dirty = c.f.Truncate(c.size) != nil
		return err
	}
	c.size += int64(len(data))
	return nil
}

// Size is the end of the last complete record.
func (c *CaptureFile) Size() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.size
}

// Close cuts a partial record left by a failed write and closes the file.
func (c *CaptureFile) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var err error
	if c.dirty {
		err = c.f.Truncate(c.size)
	}
	if cerr := c.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// OpenCaptureFile opens path for appending, creating it if needed (.gz:
// gzip). An existing file is appended to, never truncated, after a check
// that it holds the format written (length-prefixed protobuf, or OTLP/JSON
// lines with asJSON): a last record cut short, which a killed capture
// leaves and which was never acknowledged, is cut off and said so in the
// note; anything else that is not a complete record is refused.
//
// The file is locked (flock, exclusive) until Close: a second capture on
// it is refused with ErrLocked rather than each cutting it to its own end.
func OpenCaptureFile(path string, asJSON, fsync bool) (*CaptureFile, string, error) {
	gz := strings.HasSuffix(path, ".gz")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, "", err
	}
	if err := lockFile(f); err != nil {
		_ = f.Close()
		return nil, "", fmt.Errorf("%s: %w", path, err)
	}
	size, note, err := checkExisting(path, gz, asJSON)
	if err != nil {
		_ = f.Close()
		return nil, "", fmt.Errorf("%s: %w", path, err)
	}
	if fi, err := f.Stat(); err == nil && fi.Size() != size {
		if err := f.Truncate(size); err != nil {
			_ = f.Close()
			return nil, "", err
		}
	}
	return NewCaptureFile(f, size, gz, asJSON, fsync), note, nil
}
