package web

import (
	"encoding/base64"
	"net/http"
	"strconv"
	"time"

	"github.com/letterbox-dev/letterbox/broker/storage"
	"github.com/letterbox-dev/letterbox/client/wire"
	"github.com/letterbox-dev/letterbox/client/wire/compress"
	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// Reading messages without consuming them: …/subscription/{sub}/position/{n} (peek, n from 1),
// …/ledger/{l}/entry/{e} (by id) and …/examinemessage?initialPosition=&messagePosition=.
// The answer is upstream's: the payload decompressed (for a batch, the whole batch body, which
// clients split themselves) and the message metadata in X-Pulsar-* headers, those a producer
// wrote made readable to every HTTP client (peek_headers.go). Encrypted payloads are returned as
// stored.

func (s *Server) peekRoutes(rt *router) {
	s.topicRoute(rt, "GET", "/subscription/{subscription}/position/{n}", func(w http.ResponseWriter, r *http.Request, topic string) {
		if n, ok := pathInt(w, r, "n"); ok {
			e, err := s.b.PeekEntry(topic, r.PathValue("subscription"), n)
			writeEntry(w, e, err)
		}
	})
	s.topicRoute(rt, "GET", "/ledger/{ledger}/entry/{entry}", func(w http.ResponseWriter, r *http.Request, topic string) {
		l, ok := pathInt(w, r, "ledger")
		if !ok {
			return
		}
		if e, ok := pathInt(w, r, "entry"); ok {
			entry, err := s.b.EntryAt(topic, l, e)
			writeEntry(w, entry, err)
		}
	})
	s.topicRoute(rt, "GET", "/examinemessage", func(w http.ResponseWriter, r *http.Request, topic string) {
		q := r.URL.Query()
		latest := false
		switch q.Get("initialPosition") {
		case "", "latest":
			latest = true
		case "earliest":
		default:
			writeError(w, http.StatusBadRequest, "initialPosition must be earliest or latest")
			return
		}
		n := int64(1)
		if v := q.Get("messagePosition"); v != "" {
			var err error
			if n, err = strconv.ParseInt(v, 10, 64); err != nil {
				writeError(w, http.StatusBadRequest, "Invalid messagePosition "+strconv.Quote(v))
				return
			}
		}
		e, err := s.b.ExamineEntry(topic, latest, n)
		writeEntry(w, e, err)
	})
}

// httpTime is upstream's header time format.
func httpTime(ms int64) string {
	return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z")
}

func writeEntry(w http.ResponseWriter, e storage.Entry, err error) {
	if err != nil {
		writeAdminError(w, err)
		return
	}
	md, payload, err := wire.ParsePayload(e.Data)
	if err != nil {
		writeError(w, http.StatusPreconditionFailed, "stored entry "+e.Pos.String()+" cannot be decoded: "+err.Error())
		return
	}
	h := w.Header()
	h.Set("X-Pulsar-Message-ID", e.Pos.String())
	encrypted := len(md.GetEncryptionKeys()) > 0
	if !encrypted && md.GetCompression() != pb.CompressionType_NONE {
		body, err := compress.Decompress(md.GetCompression(), payload, int(md.GetUncompressedSize()))
		if err != nil {
			writeError(w, http.StatusPreconditionFailed, "stored entry "+e.Pos.String()+": "+err.Error())
			return
		}
		payload = body
	}
	setProperties(h, md.GetProperties()) // peek_headers.go, as the key and producer name below
	h.Set("X-Pulsar-publish-time", httpTime(int64(md.GetPublishTime())))
	if md.EventTime != nil && md.GetEventTime() > 0 {
		h.Set("X-Pulsar-event-time", httpTime(int64(md.GetEventTime())))
	}
	if md.DeliverAtTime != nil {
		h.Set("X-Pulsar-deliver-at-time", httpTime(md.GetDeliverAtTime()))
	}
	if md.NumMessagesInBatch != nil {
		h.Set("X-Pulsar-num-batch-message", strconv.Itoa(int(md.GetNumMessagesInBatch())))
		h.Set("X-Pulsar-batch-size", strconv.Itoa(len(payload)))
	}
	if md.NullValue != nil {
		h.Set("X-Pulsar-null-value", strconv.FormatBool(md.GetNullValue()))
	}
	producer, _ := headerValue(md.GetProducerName())
	h.Set("X-Pulsar-producer-name", producer)
	h.Set("X-Pulsar-sequence-id", strconv.FormatUint(md.GetSequenceId(), 10))
	if md.PartitionKey != nil {
		setKey(h, md.GetPartitionKey())
	}
	if len(md.GetOrderingKey()) > 0 {
		h.Set("X-Pulsar-Base64-ordering-key", base64.StdEncoding.EncodeToString(md.GetOrderingKey()))
	}
	if len(md.GetSchemaVersion()) > 0 {
		h.Set("X-Pulsar-Base64-schema-version-b64encoded", base64.StdEncoding.EncodeToString(md.GetSchemaVersion()))
	}
	h.Set("X-Pulsar-compression", md.GetCompression().String())
	h.Set("X-Pulsar-uncompressed-size", strconv.Itoa(int(md.GetUncompressedSize())))
	h.Set("X-Pulsar-Is-Encrypted", strconv.FormatBool(encrypted))
	if md.ReplicatedFrom != nil {
		from, _ := headerValue(md.GetReplicatedFrom())
		h.Set("X-Pulsar-replicated-from", from)
	}
	if md.Uuid != nil {
		h.Set("X-Pulsar-num-chunks-from-msg", strconv.Itoa(int(md.GetNumChunksFromMsg())))
		h.Set("X-Pulsar-total-chunk-msg-size", strconv.Itoa(int(md.GetTotalChunkMsgSize())))
		h.Set("X-Pulsar-chunk-id", strconv.Itoa(int(md.GetChunkId())))
	}
	h.Set("Content-Type", "application/octet-stream")
	w.WriteHeader(http.StatusOK)
	w.Write(payload)
}
