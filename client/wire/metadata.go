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
// structs with fewer allocations: the optional scalars point into one block, the properties
// share three slices, and a reader's MetadataScratch reuses all of that from one message to
// the next. Each string is exactly its bytes, never a substring of one copy of the metadata:
// those were cheaper to make, but a string kept (a key counted in a map) then kept the whole
// metadata, and a scan of a million letters peaked 80 MB higher. A scratch shares the strings
// that repeat from message to message instead (Strings).
// They handle what the fields of pulsar.proto look like on the wire; anything else (unknown
// fields, encryption keys, unexpected wire types, enum values the schema does not know,
// missing required fields) goes to proto.Unmarshal, which keeps unknown fields and words the
// errors as before. The fuzz test holds the two to the same result.

// unmarshalMetadata decodes a MessageMetadata into m, which must be new (zero), as
// proto.Unmarshal does.
func unmarshalMetadata(b []byte, m *pb.MessageMetadata) error {
	if decodeMetadata(b, m, &metaMemory{}, true) {
		return nil
	}
	return proto.Unmarshal(b, m) // resets what the fast path set
}

// unmarshalSingleMetadata decodes a SingleMessageMetadata into m, which must be new (zero),
// as proto.Unmarshal does, its strings made by strs.
func unmarshalSingleMetadata(b []byte, m *pb.SingleMessageMetadata, strs *Strings) error {
	if decodeSingleMetadata(b, m, strs) {
		return nil
	}
	return proto.Unmarshal(b, m)
}

// metaMemory is what a decoded metadata points into, and how its strings are made.
type metaMemory struct {
	sc    metaScalars
	props kvs
	strs  *Strings // nil: each string a copy of its own
	// reuse: props may be reused, the metadata decoded before being of no more use to anyone
	// (MetadataScratch).
	reuse bool
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

// fieldCounts counts the fields of b numbered a and c; ok is false when b is not a sequence
// of well-formed varint and length-delimited fields, or holds field number refused.
func fieldCounts(b []byte, a, c, refused protowire.Number) (na, nc int, ok bool) {
	ok = eachField(b, func(num protowire.Number, _ uint64, _ []byte) bool {
		switch num {
		case refused:
			return false
		case a:
			na++
		case c:
			nc++
		}
		return true
	})
	return na, nc, ok
}

// kvs is room for decoded properties.
type kvs struct {
	vals []pb.KeyValue
	ptrs []*pb.KeyValue
	strs []string // key and value of each
}

// reusedMax bounds the properties a reused kvs keeps room for: more are decoded into room of
// their own, so one odd message does not leave a reader holding its size for good.
const reusedMax = 64

// reset makes room for n properties, reusing k's when it has room enough (reuse: it belongs
// to a reader that keeps nothing of the metadata it decoded before).
func (k *kvs) reset(n int, reuse bool) {
	switch {
	case n == 0:
		k.ptrs = k.ptrs[:0]
	case reuse && n <= cap(k.vals):
		k.vals, k.ptrs, k.strs = k.vals[:n], k.ptrs[:0], k.strs[:2*n]
	case reuse && n <= reusedMax:
		c := max(n, 16)
		*k = kvs{vals: make([]pb.KeyValue, n, c), ptrs: make([]*pb.KeyValue, 0, c), strs: make([]string, 2*n, 2*c)}
	default:
		*k = kvs{vals: make([]pb.KeyValue, n), ptrs: make([]*pb.KeyValue, 0, n), strs: make([]string, 2*n)}
	}
}

// properties is what m.Properties holds: nil for none, as proto leaves it.
func (k *kvs) properties() []*pb.KeyValue {
	if len(k.ptrs) == 0 {
		return nil
	}
	return k.ptrs
}

// add decodes the KeyValue v, its strings made by strs.
func (k *kvs) add(v []byte, strs *Strings) bool {
	var key, value []byte
	ok := eachField(v, func(num protowire.Number, _ uint64, raw []byte) bool {
		switch {
		case raw == nil:
			return false
		case num == 1:
			key = raw
		case num == 2:
			value = raw
		default:
			return false
		}
		return true
	})
	if !ok || key == nil || value == nil {
		return false // required: proto.Unmarshal says which is missing
	}
	i := len(k.ptrs)
	ks, vs := &k.strs[2*i], &k.strs[2*i+1]
	*ks, *vs = strs.property(key, value)
	k.vals[i] = pb.KeyValue{Key: ks, Value: vs}
	k.ptrs = append(k.ptrs, &k.vals[i])
	return true
}

// checkKV reports whether v is a KeyValue this decoder would take: its key and value, and
// nothing else.
func checkKV(v []byte) bool {
	var seen [3]bool
	ok := eachField(v, func(num protowire.Number, _ uint64, raw []byte) bool {
		if raw == nil || (num != 1 && num != 2) {
			return false
		}
		seen[num] = true
		return true
	})
	return ok && seen[1] && seen[2]
}

// decodeMetadata is the fast path of unmarshalMetadata; false leaves the work to proto.
// Without keepProps the properties and replicate_to are only checked, as proto would check
// them, and left out of m.
func decodeMetadata(b []byte, m *pb.MessageMetadata, mem *metaMemory, keepProps bool) bool {
	nProps, nRepl, ok := fieldCounts(b, 4, 7, 13) // encryption keys: rare, left to proto
	if !ok {
		return false
	}
	if !keepProps {
		nProps, nRepl = 0, 0
	}
	sc, props, strs := &mem.sc, &mem.props, mem.strs
	props.reset(nProps, mem.reuse)
	if nRepl > 0 {
		m.ReplicateTo = make([]string, 0, nRepl)
	}
	var required uint8
	ok = eachField(b, func(num protowire.Number, v uint64, raw []byte) bool {
		if raw != nil {
			switch num {
			case 1:
				sc.producer, m.ProducerName, required = strs.field(fieldProducer, raw), &sc.producer, required|1
			case 4:
				if !keepProps {
					return checkKV(raw)
				}
				if !props.add(raw, strs) {
					return false
				}
			case 5:
				sc.from, m.ReplicatedFrom = strs.field(fieldReplicatedFrom, raw), &sc.from
			case 6:
				sc.key, m.PartitionKey = strs.field(fieldPartitionKey, raw), &sc.key
			case 7:
				if keepProps {
					m.ReplicateTo = append(m.ReplicateTo, string(raw))
				}
			case 14:
				sc.algo, m.EncryptionAlgo = strs.field(fieldEncryptionAlgo, raw), &sc.algo
			case 15:
				m.EncryptionParam = append([]byte{}, raw...)
			case 16:
				m.SchemaVersion = append([]byte{}, raw...)
			case 18:
				m.OrderingKey = append([]byte{}, raw...)
			case 26:
				sc.uuid, m.Uuid = strs.field(fieldUUID, raw), &sc.uuid
			default:
				return false
			}
			return true
		}
		switch num {
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
		return true
	})
	m.Properties = props.properties()
	return ok && required == 7
}

// decodeSingleMetadata is the fast path of unmarshalSingleMetadata.
func decodeSingleMetadata(b []byte, m *pb.SingleMessageMetadata, strs *Strings) bool {
	nProps, _, ok := fieldCounts(b, 1, 0, 0)
	if !ok {
		return false
	}
	sc := &metaScalars{}
	props := &kvs{}
	props.reset(nProps, false)
	sized := false
	ok = eachField(b, func(num protowire.Number, v uint64, raw []byte) bool {
		if raw != nil {
			switch num {
			case 1:
				if !props.add(raw, strs) {
					return false
				}
			case 2:
				sc.key, m.PartitionKey = strs.field(fieldPartitionKey, raw), &sc.key
			case 7:
				m.OrderingKey = append([]byte{}, raw...)
			default:
				return false
			}
			return true
		}
		switch num {
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
		return true
	})
	m.Properties = props.properties()
	return ok && sized
}
