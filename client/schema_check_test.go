package client_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/admin"
	"github.com/letterbox-dev/letterbox/internal/brokertest"
)

// TestPayloadDecoder: a payload decodes with the schema its topic holds at a version; a topic
// without one answers ErrNoSchema; a payload that does not decode wraps ErrSchema with the
// decoder's words; a schema letterbox cannot decode is neither, so nobody takes "cannot tell"
// for an answer.
func TestPayloadDecoder(t *testing.T) {
	t.Parallel()
	env := brokertest.Start(t)
	c := newClient(t, env.Broker)
	ctx := brokertest.Ctx(t, 30*time.Second)
	avroTopic, jsonTopic, bare, proto := uniqueTopic(t), uniqueTopic(t), uniqueTopic(t), uniqueTopic(t)
	avroSchema, err := client.NewAvroSchema(orderAvro)
	if err != nil {
		t.Fatal(err)
	}
	p := mustProducer(t, c, client.ProducerOptions{Topic: avroTopic, Schema: avroSchema})
	good, err := avroSchema.Encode(order{ID: 1, Item: "book", Price: 12})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Send(ctx, &client.Message{Value: order{ID: 1, Item: "book", Price: 12}}); err != nil {
		t.Fatal(err)
	}
	mustProducer(t, c, client.ProducerOptions{Topic: jsonTopic, Schema: client.JSONSchema{Definition: orderAvro}})
	if err := env.Admin.CreateSchema(ctx, proto, "PROTOBUF", orderAvro, nil); err != nil {
		t.Fatal(err)
	}
	v0 := admin.SchemaVersionBytes(0)
	d := c.NewPayloadDecoder()
	for _, tc := range []struct {
		topic   string
		version []byte
		payload string
		want    error // nil, ErrNoSchema, ErrSchema, or errCannotTell
	}{
		{avroTopic, v0, string(good), nil},
		{avroTopic, nil, string(good), nil},
		{avroTopic, v0, "\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff", client.ErrSchema},
		{avroTopic, v0, string(good[:len(good)-1]), client.ErrSchema}, // truncated
		{avroTopic, v0, "", client.ErrSchema},
		{avroTopic, v0, "not avro at all {}", client.ErrSchema},
		{avroTopic, admin.SchemaVersionBytes(7), string(good), client.ErrNoSchema},
		{jsonTopic, v0, `{"id":1}`, nil},
		{jsonTopic, v0, `{"id":1} x`, client.ErrSchema},
		{jsonTopic, v0, ``, client.ErrSchema},
		{bare, nil, "anything", client.ErrNoSchema},
		{proto, nil, "anything", errCannotTell},
	} {
		err := d.Decode(ctx, tc.topic, tc.version, []byte(tc.payload))
		switch {
		case tc.want == errCannotTell:
			if err == nil || errors.Is(err, client.ErrSchema) || errors.Is(err, client.ErrNoSchema) {
				t.Errorf("%s %q: %v, want neither an answer nor no schema", tc.topic, tc.payload, err)
			}
		case tc.want == nil && err != nil, tc.want != nil && !errors.Is(err, tc.want):
			t.Errorf("%s %x %q: %v, want %v", tc.topic, tc.version, tc.payload, err, tc.want)
		}
	}
	// The decoder's own words travel: they are what a group "does not decode: …" shows.
	err = d.Decode(ctx, jsonTopic, v0, []byte(`{"id":`))
	if err == nil || !strings.Contains(err.Error(), "unexpected end of JSON input") {
		t.Errorf("the JSON decoder's error: %v", err)
	}
}

// errCannotTell marks the cases TestPayloadDecoder wants neither answered nor "no schema".
var errCannotTell = errors.New("cannot tell")
