package wire

import (
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// Every message a client receives carries a MessageMetadata, and every message of a batch a
// SingleMessageMetadata. proto.Unmarshal decodes them by reflection and allocates each
// optional field, each property and each string on its own: for a consumer of single-message
// entries (a replay) that was a fifth of its CPU. The decoders below fill the same generated
// structs in a few allocations: the strings are substrings of one copy of the encoded
// metadata, the optional scalars point into one block, the properties share three slices.
// They handle what the fields of pulsar.proto look like on the wire; anything else (unknown
// fields, encryption keys, unexpected wire types, enum values the schema does not know,
// missing required fields) goes to proto.Unmarshal, which keeps unknown fields and words the
// errors as before. The fuzz test holds the two to the same result.

// unmarshalMetadata decodes a MessageMetadata into m, which must be new (zero), as
// proto.Unmarshal does.
func unmarshalMetadata(b []byte, m *pb.MessageMetadata) error {
	if decodeMetadata(b, m) {
		return nil
	}
	return proto.Unmarshal(b, m) // resets what the fast path set
}

// unmarshalSingleMetadata decodes a SingleMessageMetadata into m, which must be new (zero),
// as proto.Unmarshal does.
func unmarshalSingleMetadata(b []byte, m *pb.SingleMessageMetadata) error {
	if decodeSingleMetadata(b, m) {
		return nil
	}
	return proto.Unmarshal(b, m)
}

// metaScalars holds the optional scalars of one decoded metadata, which the generated struct
// points to.
type metaScalars struct {
	seq, publish, event, txnLow, txnHigh, highest uint64
	deliverAt                                     int64
	uncompressed                                  uint32
	batch, marker, chunks, chunkTotal, chunkID    int32
	payloadSize                                   int32
	compression                                   pb.CompressionType
	b64, null, nullKey, compacted                 bool
	producer, from, key, algo, uuid               string
}

// fieldCounts walks the fields of b and counts those numbered a and c; ok is false when b is
// not a sequence of well-formed fields or holds field number refused.
func fieldCounts(b []byte, a, c, refused protowire.Number) (na, nc int, ok bool) {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 || num == refused {
			return 0, 0, false
		}
		b = b[n:]
		m := protowire.ConsumeFieldValue(num, typ, b)
		if m < 0 {
			return 0, 0, false
		}
		b = b[m:]
		switch num {
		case a:
			na++
		case c:
			nc++
		}
	}
	return na, nc, true
}

// kvs is room for n decoded properties.
type kvs struct {
	vals []pb.KeyValue
	ptrs []*pb.KeyValue
	strs []string // key and value of each
}

func newKVs(n int) kvs {
	if n == 0 {
		return kvs{}
	}
	return kvs{vals: make([]pb.KeyValue, n), ptrs: make([]*pb.KeyValue, 0, n), strs: make([]string, 2*n)}
}

// add decodes the KeyValue v, found at offset off of the metadata whose copy is s.
func (k *kvs) add(v []byte, off int, s string) bool {
	i := len(k.ptrs)
	kv := &k.vals[i]
	for len(v) > 0 {
		num, typ, n := protowire.ConsumeTag(v)
		if n < 0 || typ != protowire.BytesType || (num != 1 && num != 2) {
			return false
		}
		b, m := protowire.ConsumeBytes(v[n:])
		if m < 0 {
			return false
		}
		start := off + n + m - len(b)
		str := &k.strs[2*i+int(num)-1]
		*str = s[start : start+len(b)]
		if num == 1 {
			kv.Key = str
		} else {
			kv.Value = str
		}
		v, off = v[n+m:], off+n+m
	}
	if kv.Key == nil || kv.Value == nil {
		return false // required: proto.Unmarshal says which is missing
	}
	k.ptrs = append(k.ptrs, kv)
	return true
}

// field is one decoded field of a metadata: a varint, or bytes at an offset of the metadata.
type field struct {
	num   protowire.Number
	typ   protowire.Type
	v     uint64
	bytes []byte
	off   int // of bytes, in the metadata
}

// next decodes the field at b[off:] and returns the offset after it; −1 when it is malformed
// or of a wire type no field of ours has.
func nextField(b []byte, off int) (field, int) {
	num, typ, n := protowire.ConsumeTag(b[off:])
	if n < 0 {
		return field{}, -1
	}
	f := field{num: num, typ: typ}
	switch typ {
	case protowire.VarintType:
		v, m := protowire.ConsumeVarint(b[off+n:])
		if m < 0 {
			return field{}, -1
		}
		f.v = v
		return f, off + n + m
	case protowire.BytesType:
		v, m := protowire.ConsumeBytes(b[off+n:])
		if m < 0 {
			return field{}, -1
		}
		f.bytes, f.off = v, off+n+m-len(v)
		return f, off + n + m
	}
	return field{}, -1
}

// str is f's bytes as a substring of s, the copy of the metadata.
func (f field) str(s string) string { return s[f.off : f.off+len(f.bytes)] }

// decodeMetadata is the fast path of unmarshalMetadata; false leaves the work to proto.
func decodeMetadata(b []byte, m *pb.MessageMetadata) bool {
	nProps, nRepl, ok := fieldCounts(b, 4, 7, 13) // encryption keys: rare, left to proto
	if !ok {
		return false
	}
	s := string(b)
	sc := &metaScalars{}
	props := newKVs(nProps)
	if nRepl > 0 {
		m.ReplicateTo = make([]string, 0, nRepl)
	}
	var required uint8
	for off := 0; off < len(b); {
		var f field
		if f, off = nextField(b, off); off < 0 {
			return false
		}
		if f.typ == protowire.BytesType {
			switch f.num {
			case 1:
				sc.producer, m.ProducerName, required = f.str(s), &sc.producer, required|1
			case 4:
				if !props.add(f.bytes, f.off, s) {
					return false
				}
			case 5:
				sc.from, m.ReplicatedFrom = f.str(s), &sc.from
			case 6:
				sc.key, m.PartitionKey = f.str(s), &sc.key
			case 7:
				m.ReplicateTo = append(m.ReplicateTo, f.str(s))
			case 14:
				sc.algo, m.EncryptionAlgo = f.str(s), &sc.algo
			case 15:
				m.EncryptionParam = append([]byte{}, f.bytes...)
			case 16:
				m.SchemaVersion = append([]byte{}, f.bytes...)
			case 18:
				m.OrderingKey = append([]byte{}, f.bytes...)
			case 26:
				sc.uuid, m.Uuid = f.str(s), &sc.uuid
			default:
				return false
			}
			continue
		}
		v := f.v
		switch f.num {
		case 2:
			sc.seq, m.SequenceId, required = v, &sc.seq, required|2
		case 3:
			sc.publish, m.PublishTime, required = v, &sc.publish, required|4
		case 8:
			if _, known := pb.CompressionType_name[int32(v)]; !known || v > 1<<31 {
				return false // a closed enum: proto keeps an unknown value as an unknown field
			}
			sc.compression, m.Compression = pb.CompressionType(v), &sc.compression
		case 9:
			sc.uncompressed, m.UncompressedSize = uint32(v), &sc.uncompressed
		case 11:
			sc.batch, m.NumMessagesInBatch = int32(v), &sc.batch
		case 12:
			sc.event, m.EventTime = v, &sc.event
		case 17:
			sc.b64, m.PartitionKeyB64Encoded = v != 0, &sc.b64
		case 19:
			sc.deliverAt, m.DeliverAtTime = int64(v), &sc.deliverAt
		case 20:
			sc.marker, m.MarkerType = int32(v), &sc.marker
		case 22:
			sc.txnLow, m.TxnidLeastBits = v, &sc.txnLow
		case 23:
			sc.txnHigh, m.TxnidMostBits = v, &sc.txnHigh
		case 24:
			sc.highest, m.HighestSequenceId = v, &sc.highest
		case 25:
			sc.null, m.NullValue = v != 0, &sc.null
		case 27:
			sc.chunks, m.NumChunksFromMsg = int32(v), &sc.chunks
		case 28:
			sc.chunkTotal, m.TotalChunkMsgSize = int32(v), &sc.chunkTotal
		case 29:
			sc.chunkID, m.ChunkId = int32(v), &sc.chunkID
		case 30:
			sc.nullKey, m.NullPartitionKey = v != 0, &sc.nullKey
		default:
			return false
		}
	}
	m.Properties = props.ptrs
	return required == 7
}

// decodeSingleMetadata is the fast path of unmarshalSingleMetadata.
func decodeSingleMetadata(b []byte, m *pb.SingleMessageMetadata) bool {
	nProps, _, ok := fieldCounts(b, 1, 0, 0)
	if !ok {
		return false
	}
	s := string(b)
	sc := &metaScalars{}
	props := newKVs(nProps)
	sized := false
	for off := 0; off < len(b); {
		var f field
		if f, off = nextField(b, off); off < 0 {
			return false
		}
		if f.typ == protowire.BytesType {
			switch f.num {
			case 1:
				if !props.add(f.bytes, f.off, s) {
					return false
				}
			case 2:
				sc.key, m.PartitionKey = f.str(s), &sc.key
			case 7:
				m.OrderingKey = append([]byte{}, f.bytes...)
			default:
				return false
			}
			continue
		}
		v := f.v
		switch f.num {
		case 3:
			sc.payloadSize, m.PayloadSize, sized = int32(v), &sc.payloadSize, true
		case 4:
			sc.compacted, m.CompactedOut = v != 0, &sc.compacted
		case 5:
			sc.event, m.EventTime = v, &sc.event
		case 6:
			sc.b64, m.PartitionKeyB64Encoded = v != 0, &sc.b64
		case 8:
			sc.seq, m.SequenceId = v, &sc.seq
		case 9:
			sc.null, m.NullValue = v != 0, &sc.null
		case 10:
			sc.nullKey, m.NullPartitionKey = v != 0, &sc.nullKey
		default:
			return false
		}
	}
	m.Properties = props.ptrs
	return sized
}
