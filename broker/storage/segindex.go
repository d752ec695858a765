package storage

// Segment indexes. A sealed segment never changes again, so when it is sealed its in-memory
// index is written beside it, <ledger, 20 digits>.idx, and opening the log reads that file
// instead of reading and checksumming every record: what a topic costs to open no longer grows
// with what it stores. The open tail segment (the one appends went to when the log last
// stopped, cleanly or not) has no index and is always scanned, so that a torn or damaged tail is
// cut as before.
//
//	header   32 bytes: magic "LBXIDX2\n", ledger id u64, segment end u64, entry count u64
//	entries  count × 24 bytes: record offset u64, publish time i64, data length u32,
//	         message count u32
//	trailer  CRC-32C of everything before it (u32)
//
// All integers little-endian. Version 1 ("LBXIDX1\n") had no message count (its data length
// was a u64): such an index is treated as a missing one, so the segment is scanned once and its
// index written again in version 2. An index is used only if its checksum holds, it names its
// segment's ledger, its end is the segment file's size, its offsets rise from the header to the
// end, and the segment's header and last record check out (two small reads). Anything else —
// no index, a torn one (they are written without fsync: a crash may leave any prefix), one
// that does not match — and the segment is scanned as before and its index written again.
// Records are still checked against their checksums whenever they are read; a damaged record
// in a sealed segment found then ends what is served of that segment, as a scan would have.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
)

const (
	idxMagic      = "LBXIDX2\n"
	idxMagicV1    = "LBXIDX1\n"
	idxHeaderSize = 32
	idxEntrySize  = 24
	idxSuffix     = ".idx"
)

func idxFileName(ledger int64) string { return fmt.Sprintf("%020d%s", ledger, idxSuffix) }

// parseIdxFileName returns the ledger of an index file name.
func parseIdxFileName(name string) (int64, bool) {
	s, ok := strings.CutSuffix(name, idxSuffix)
	if !ok {
		return 0, false
	}
	return parseSegFileName(s + ".seg")
}

// encodeIndex is s's index file.
func encodeIndex(s *segment) []byte {
	buf := make([]byte, 0, idxHeaderSize+len(s.idx)*idxEntrySize+4)
	buf = append(buf, idxMagic...)
	buf = binary.LittleEndian.AppendUint64(buf, uint64(s.ledger))
	buf = binary.LittleEndian.AppendUint64(buf, uint64(s.end))
	buf = binary.LittleEndian.AppendUint64(buf, uint64(len(s.idx)))
	for _, e := range s.idx {
		buf = binary.LittleEndian.AppendUint64(buf, uint64(e.off))
		buf = binary.LittleEndian.AppendUint64(buf, uint64(e.publish))
		buf = binary.LittleEndian.AppendUint32(buf, uint32(e.dataLen))
		buf = binary.LittleEndian.AppendUint32(buf, uint32(e.num))
	}
	return binary.LittleEndian.AppendUint32(buf, crc32.Checksum(buf, castagnoli))
}

var (
	errBadIndex = errors.New("storage: index does not match its segment")
	// errOldIndex is an index of version 1, which counts no messages: rebuilt like a missing one.
	errOldIndex = errors.New("storage: index of an older format")
)

// decodeIndex parses an index file of ledger's segment: its end and entries.
func decodeIndex(b []byte, ledger int64) (int64, []indexEntry, error) {
	if len(b) >= 8 && string(b[:8]) == idxMagicV1 {
		return 0, nil, errOldIndex
	}
	if len(b) < idxHeaderSize+4 || string(b[:8]) != idxMagic {
		return 0, nil, errBadIndex
	}
	body := b[:len(b)-4]
	if crc32.Checksum(body, castagnoli) != binary.LittleEndian.Uint32(b[len(b)-4:]) {
		return 0, nil, errBadIndex
	}
	end := int64(binary.LittleEndian.Uint64(b[16:]))
	n := binary.LittleEndian.Uint64(b[24:])
	if int64(binary.LittleEndian.Uint64(b[8:])) != ledger || n != uint64(len(body)-idxHeaderSize)/idxEntrySize ||
		uint64(len(body)-idxHeaderSize)%idxEntrySize != 0 {
		return 0, nil, errBadIndex
	}
	idx := make([]indexEntry, n)
	prev := int64(segHeaderSize)
	for i := range idx {
		p := body[idxHeaderSize+i*idxEntrySize:]
		e := indexEntry{
			off:     int64(binary.LittleEndian.Uint64(p)),
			publish: int64(binary.LittleEndian.Uint64(p[8:])),
			dataLen: int32(binary.LittleEndian.Uint32(p[16:])),
			num:     int32(binary.LittleEndian.Uint32(p[20:])),
		}
		// Each record starts where the previous one ends, at least a record's fixed size on.
		if (i == 0 && e.off != segHeaderSize) || (i > 0 && e.off < prev+recPrefix+recFixed) || e.dataLen < 0 {
			return 0, nil, errBadIndex
		}
		prev = e.off
		idx[i] = e
	}
	if (n == 0 && end != segHeaderSize) || (n > 0 && end < prev+recPrefix+recFixed) {
		return 0, nil, errBadIndex
	}
	return end, idx, nil
}

// loadIndex fills s (opened, not scanned) from its index file, if there is one that matches the
// file. It reads the index, the segment's header and its last record.
func (l *FileLog) loadIndex(s *segment) error {
	var b []byte
	err := l.files.transient(func() (err error) {
		b, err = os.ReadFile(filepath.Join(l.dir, idxFileName(s.ledger)))
		return err
	})
	if err != nil {
		return err
	}
	end, idx, err := decodeIndex(b, s.ledger)
	if err != nil {
		return err
	}
	if size, err := s.f.Size(); err != nil || size != end {
		return errBadIndex
	}
	h := make([]byte, segHeaderSize)
	if _, err := s.f.ReadAt(h, 0); err != nil {
		return err
	}
	switch {
	case int64(binary.LittleEndian.Uint64(h[8:])) != s.ledger:
		return errBadIndex
	case string(h[:8]) == segMagic:
		s.seed = recordSeed(s.ledger)
	case string(h[:8]) == segMagicV1:
		s.seed = 0
	default:
		return errBadIndex
	}
	s.end = end
	for _, e := range idx {
		s.addIndex(e)
	}
	if n := len(idx); n > 0 {
		rec := make([]byte, s.recordEnd(n-1)-idx[n-1].off)
		if _, err := s.f.ReadAt(rec, idx[n-1].off); err != nil {
			s.idx, s.msgs, s.end = nil, msgCounts{}, 0
			return err
		}
		entry, ie, err := checkRecord(rec, s.seed)
		if err != nil || entry != int64(n-1) || ie.publish != idx[n-1].publish || ie.dataLen != idx[n-1].dataLen || ie.num != idx[n-1].num {
			s.idx, s.msgs, s.end = nil, msgCounts{}, 0
			return errBadIndex
		}
	}
	return nil
}

// writeIndex writes sealed segment s's index. It is not synced: a torn index fails its checksum
// and the segment is scanned instead. A failure only costs the next open a scan.
func (l *FileLog) writeIndex(s *segment) {
	path := filepath.Join(l.dir, idxFileName(s.ledger))
	err := l.files.transient(func() error { return os.WriteFile(path, encodeIndex(s), filePerm) })
	if err != nil {
		l.log.Warn("storage: could not write a segment's index; the next open scans it", "segment", s.path, "error", err)
		os.Remove(path)
	}
}

// removeIndex removes ledger's index, if it has one.
func (l *FileLog) removeIndex(ledger int64) {
	if err := os.Remove(filepath.Join(l.dir, idxFileName(ledger))); err != nil && !errors.Is(err, os.ErrNotExist) {
		l.log.Warn("storage: could not remove a trimmed segment's index", "ledger", ledger, "error", err)
	}
}
