package storage

// Segment file format. A segment holds the entries of one ledger of one topic:
//
//	header  16 bytes: magic "LBXSEG2\n", ledger id (uint64)
//	record  repeated:
//	  0  4  body length L (uint32)
//	  4  4  CRC-32C (Castagnoli) of the ledger id (8 bytes), the 4 length bytes and the body
//	  8  L  body:
//	        entry id u64 · publish time i64 · deliver-at i64 · sequence id u64 ·
//	        num messages i32 · flags u8 (bit 0: batched) · key length u32 ·
//	        producer name length u32 · key · producer name · data (the rest)
//
// All integers are little-endian. Entry ids count from 0 in each segment and are stored so that
// a record that passes its checksum in the wrong place is still caught. A record is valid only
// if its length fits in the file, its checksum matches and its entry id is the next one; the
// first invalid record ends what is served of the segment.
//
// The ledger id is in every record's checksum because segment files are recycled: a trimmed
// segment's file is written over by a later ledger (see FileLog), so past the new ledger's last
// record lie the old one's, whole and with good checksums of their own, entry ids and all. They
// fail the new ledger's checksum. Version 1 ("LBXSEG1\n", written before files were recycled)
// left the ledger out of the checksum; such files are still read.

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"strings"
)

const (
	segMagic      = "LBXSEG2\n"
	segMagicV1    = "LBXSEG1\n"
	segHeaderSize = 16
	recPrefix     = 8                             // length + crc
	recFixed      = 8 + 8 + 8 + 8 + 4 + 1 + 4 + 4 // fixed part of the body
	// maxRecordBody bounds a length read from disk, so a corrupt length cannot make recovery
	// allocate gigabytes. Pulsar's own limit on a message is far below it.
	maxRecordBody = 1 << 30
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// errCorrupt marks a record that fails validation.
var errCorrupt = errors.New("storage: corrupt record")

func segHeader(ledger int64) []byte {
	h := make([]byte, segHeaderSize)
	copy(h, segMagic)
	binary.LittleEndian.PutUint64(h[8:], uint64(ledger))
	return h
}

// recordSeed is the checksum state every record of a version 2 segment of ledger starts from.
func recordSeed(ledger int64) uint32 {
	return crc32.Checksum(binary.LittleEndian.AppendUint64(nil, uint64(ledger)), castagnoli)
}

func segFileName(ledger int64) string { return fmt.Sprintf("%020d.seg", ledger) }

// parseSegFileName returns the ledger of a segment file name.
func parseSegFileName(name string) (int64, bool) {
	s, ok := strings.CutSuffix(name, ".seg")
	if !ok || len(s) == 0 {
		return 0, false
	}
	var n int64
	for _, c := range []byte(s) {
		if c < '0' || c > '9' || n > (1<<62)/10 {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

func recordSize(meta *Meta, data []byte) int {
	return recPrefix + recFixed + len(meta.Key) + len(meta.ProducerName) + len(data)
}

// appendRecord encodes one record onto buf; seed is the segment's (recordSeed, or 0 in version 1).
func appendRecord(buf []byte, seed uint32, entry int64, meta *Meta, data []byte) []byte {
	start := len(buf)
	body := recFixed + len(meta.Key) + len(meta.ProducerName) + len(data)
	buf = binary.LittleEndian.AppendUint32(buf, uint32(body))
	buf = binary.LittleEndian.AppendUint32(buf, 0) // crc, below
	buf = binary.LittleEndian.AppendUint64(buf, uint64(entry))
	buf = binary.LittleEndian.AppendUint64(buf, uint64(meta.PublishTime))
	buf = binary.LittleEndian.AppendUint64(buf, uint64(meta.DeliverAt))
	buf = binary.LittleEndian.AppendUint64(buf, meta.SequenceID)
	buf = binary.LittleEndian.AppendUint32(buf, uint32(meta.NumMessages))
	var flags byte
	if meta.Batched {
		flags |= 1
	}
	buf = append(buf, flags)
	buf = binary.LittleEndian.AppendUint32(buf, uint32(len(meta.Key)))
	buf = binary.LittleEndian.AppendUint32(buf, uint32(len(meta.ProducerName)))
	buf = append(buf, meta.Key...)
	buf = append(buf, meta.ProducerName...)
	buf = append(buf, data...)
	crc := crc32.Update(crc32.Update(seed, castagnoli, buf[start:start+4]), castagnoli, buf[start+recPrefix:])
	binary.LittleEndian.PutUint32(buf[start+4:], crc)
	return buf
}

// checkRecord validates rec (prefix and body, exactly one record) against the segment's seed
// and returns its entry id and what the index keeps of it.
func checkRecord(rec []byte, seed uint32) (entry int64, ie indexEntry, err error) {
	if len(rec) < recPrefix+recFixed {
		return 0, ie, errCorrupt
	}
	body := rec[recPrefix:]
	if int(binary.LittleEndian.Uint32(rec)) != len(body) {
		return 0, ie, errCorrupt
	}
	crc := crc32.Update(crc32.Update(seed, castagnoli, rec[:4]), castagnoli, body)
	if crc != binary.LittleEndian.Uint32(rec[4:]) {
		return 0, ie, errCorrupt
	}
	keyLen := uint64(binary.LittleEndian.Uint32(body[37:]))
	prodLen := uint64(binary.LittleEndian.Uint32(body[41:]))
	if recFixed+keyLen+prodLen > uint64(len(body)) {
		return 0, ie, errCorrupt
	}
	entry = int64(binary.LittleEndian.Uint64(body))
	ie = indexEntry{
		publish: int64(binary.LittleEndian.Uint64(body[8:])),
		dataLen: int32(len(body) - recFixed - int(keyLen) - int(prodLen)),
		num:     int32(binary.LittleEndian.Uint32(body[32:])),
	}
	return entry, ie, nil
}

// decodeRecord validates rec as a record of segment s and decodes it. Data aliases rec.
func (s *segment) decodeRecord(rec []byte) (Entry, error) {
	ledger := s.ledger
	entry, _, err := checkRecord(rec, s.seed)
	if err != nil {
		return Entry{}, err
	}
	body := rec[recPrefix:]
	keyLen := int(binary.LittleEndian.Uint32(body[37:]))
	prodLen := int(binary.LittleEndian.Uint32(body[41:]))
	rest := body[recFixed:]
	return Entry{
		Pos: Position{Ledger: ledger, Entry: entry},
		Meta: Meta{
			PublishTime:  int64(binary.LittleEndian.Uint64(body[8:])),
			DeliverAt:    int64(binary.LittleEndian.Uint64(body[16:])),
			SequenceID:   binary.LittleEndian.Uint64(body[24:]),
			NumMessages:  int32(binary.LittleEndian.Uint32(body[32:])),
			Batched:      body[36]&1 != 0,
			Key:          string(rest[:keyLen]),
			ProducerName: string(rest[keyLen : keyLen+prodLen]),
		},
		Data: rest[keyLen+prodLen:],
	}, nil
}

// indexEntry locates one entry in its segment file. The data length fits in 32 bits
// (maxRecordBody), so the message count costs the index nothing.
type indexEntry struct {
	off     int64 // of the record
	publish int64
	dataLen int32
	num     int32 // messages in the entry (Meta.NumMessages)
}

// segment is one segment file and its in-memory index.
type segment struct {
	ledger int64
	seed   uint32 // of its records' checksums: recordSeed(ledger), or 0 in a version 1 file
	path   string
	f      *segFile // opened on demand (filecache.go)
	// recycled: the file held an earlier segment, whose bytes may lie past end.
	recycled bool
	// end is the offset after the last good record: where the next record goes, and how far
	// reads may go. Bytes past it (a torn tail not yet cut) are never served.
	end  int64
	idx  []indexEntry
	msgs msgCounts // of idx's entries
}

func (s *segment) count() int64 { return int64(len(s.idx)) }

// addIndex indexes the segment's next entry.
func (s *segment) addIndex(e indexEntry) {
	s.msgs.add(int64(len(s.idx)), e.num)
	s.idx = append(s.idx, e)
}

// num is entry i's message count.
func (s *segment) num(i int64) int32 { return s.idx[i].num }

// messagesBefore counts the messages of entries 0 … i−1 (i ≤ count()).
func (s *segment) messagesBefore(i int64) int64 { return s.msgs.before(i, s.num) }

// cutIndex ends the segment's index before entry k.
func (s *segment) cutIndex(k int) {
	s.msgs.cut(int64(k), s.num)
	s.idx = s.idx[:k:k]
}

// recordEnd is the offset after entry i's record.
func (s *segment) recordEnd(i int) int64 {
	if i+1 < len(s.idx) {
		return s.idx[i+1].off
	}
	return s.end
}

// scanResult is what scanning a segment file found.
type scanResult struct {
	fileSize int64
	badAt    int64 // offset of the first invalid byte, or -1 if the file is clean
	reason   string
}

// scan reads s.f from the header on, verifying every record and building the index. It stops
// at the first invalid record and sets s.end to the offset after the last valid one.
func (s *segment) scan() (scanResult, error) {
	size, err := s.f.Size()
	if err != nil {
		return scanResult{}, err
	}
	res := scanResult{fileSize: size, badAt: -1}
	if size < segHeaderSize {
		res.badAt, res.reason = 0, "short header"
		return res, nil
	}
	h := make([]byte, segHeaderSize)
	if _, err := s.f.ReadAt(h, 0); err != nil {
		return res, err
	}
	switch {
	case int64(binary.LittleEndian.Uint64(h[8:])) != s.ledger:
		res.badAt, res.reason = 0, "bad header"
		return res, nil
	case string(h[:8]) == segMagic:
		s.seed = recordSeed(s.ledger)
	case string(h[:8]) == segMagicV1:
		s.seed = 0
	default:
		res.badAt, res.reason = 0, "bad header"
		return res, nil
	}
	r := bufio.NewReaderSize(io.NewSectionReader(s.f, segHeaderSize, size-segHeaderSize), 1<<20)
	off := int64(segHeaderSize)
	var big []byte
	for off < size {
		if size-off < recPrefix+recFixed {
			res.badAt, res.reason = off, "short record"
			break
		}
		p, err := r.Peek(4)
		if err != nil {
			return res, err
		}
		n := int64(binary.LittleEndian.Uint32(p)) + recPrefix
		if n-recPrefix < recFixed || n-recPrefix > maxRecordBody {
			res.badAt, res.reason = off, "bad length"
			break
		}
		if off+n > size {
			res.badAt, res.reason = off, "short record"
			break
		}
		var rec []byte
		if n <= int64(r.Size()) {
			if rec, err = r.Peek(int(n)); err != nil {
				return res, err
			}
		} else {
			if int64(cap(big)) < n {
				big = make([]byte, n)
			}
			rec = big[:n]
			if _, err := io.ReadFull(r, rec); err != nil {
				return res, err
			}
		}
		entry, ie, err := checkRecord(rec, s.seed)
		if err != nil {
			res.badAt, res.reason = off, "bad checksum"
			break
		}
		if entry != int64(len(s.idx)) {
			res.badAt, res.reason = off, fmt.Sprintf("entry id %d where %d was due", entry, len(s.idx))
			break
		}
		ie.off = off
		s.addIndex(ie)
		if n <= int64(r.Size()) {
			r.Discard(int(n))
		}
		off += n
	}
	s.end = off
	if res.badAt >= 0 {
		s.end = res.badAt
	}
	return res, nil
}
