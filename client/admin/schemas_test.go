package admin_test

import (
	"net/http"
	"testing"
)

const (
	schemaTopic = "persistent://public/default/schematic"
	avroV1      = `{"type":"record","name":"Order","fields":[{"name":"id","type":"string"}]}`
	// avroV2 adds a field with a default: compatible both ways.
	avroV2 = `{"type":"record","name":"Order","fields":[{"name":"id","type":"string"},{"name":"qty","type":"int","default":0}]}`
	// avroBad changes a field's type: incompatible.
	avroBad = `{"type":"record","name":"Order","fields":[{"name":"id","type":"int"}]}`
)

func TestSchemaVersionOf(t *testing.T) {
	t.Parallel()
	_, c := start(t)
	x := ctx(t)
	must(t, c.CreateSchema(x, schemaTopic, "AVRO", avroV1, nil))
	must(t, c.CreateSchema(x, schemaTopic, "AVRO", avroV2, nil))
	for want, def := range []string{avroV1, avroV2} {
		v, err := c.SchemaVersionOf(x, schemaTopic, "AVRO", def, nil)
		must(t, err)
		if v != int64(want) {
			t.Errorf("version of schema %d = %d", want, v)
		}
	}
	_, err := c.SchemaVersionOf(x, schemaTopic, "AVRO", avroBad, nil)
	wantStatus(t, "a schema never registered", err, http.StatusNotFound)
}

func TestSchemaCompatibility(t *testing.T) {
	t.Parallel()
	c := startNS(t)
	x := ctx(t)
	const topic = "persistent://acme/app/orders"
	must(t, c.SetSchemaCompatibilityStrategy(x, "acme/app", "FULL"))
	must(t, c.CreateSchema(x, topic, "AVRO", avroV1, nil))
	ok, err := c.SchemaCompatibility(x, topic, "AVRO", avroV2, nil)
	must(t, err)
	if !ok.Compatible || ok.Strategy != "FULL" {
		t.Errorf("compatible schema: %+v", ok)
	}
	bad, err := c.SchemaCompatibility(x, topic, "AVRO", avroBad, nil)
	must(t, err)
	if bad.Compatible || bad.Strategy != "FULL" {
		t.Errorf("incompatible schema: %+v", bad)
	}
	// Checking registers nothing.
	all, err := c.Schemas(x, topic)
	must(t, err)
	if len(all) != 1 {
		t.Errorf("%d versions after checks, want 1", len(all))
	}
	_, err = c.SchemaCompatibility(x, topic, "NOPE", avroV1, nil)
	wantStatus(t, "unknown schema type", err, http.StatusBadRequest)
	_, err = c.SchemaCompatibility(x, "persistent://acme/nope/orders", "AVRO", avroV1, nil)
	wantStatus(t, "a namespace that does not exist", err, http.StatusNotFound)
}

func TestSchemaVersionsAndDelete(t *testing.T) {
	t.Parallel()
	_, c := start(t)
	x := ctx(t)
	must(t, c.CreateSchema(x, schemaTopic, "AVRO", avroV1, map[string]string{"team": "orders"}))
	must(t, c.CreateSchema(x, schemaTopic, "AVRO", avroV2, nil))
	v0, err := c.Schema(x, schemaTopic, 0)
	must(t, err)
	if v0.Version != 0 || v0.Type != "AVRO" || v0.Data != avroV1 || v0.Properties["team"] != "orders" {
		t.Errorf("version 0 = %+v", v0)
	}
	all, err := c.Schemas(x, schemaTopic)
	must(t, err)
	if len(all) != 2 || all[1].Data != avroV2 {
		t.Errorf("all versions = %+v", all)
	}
	must(t, c.DeleteSchema(x, schemaTopic))
	_, err = c.Schema(x, schemaTopic, -1)
	wantStatus(t, "schema after deletion", err, http.StatusNotFound)
}
