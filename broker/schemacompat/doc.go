// Package schemacompat decides whether a schema may follow a topic's existing schemas, as
// upstream Pulsar's schema registry decides it. It is pure: no I/O, no state, no locks; the
// broker's registry owns versions, storage and policy lookup, and calls Check and Validate.
//
// # What Check does, step by step (upstream's SchemaRegistryServiceImpl)
//
//   - The candidate is validated first (Validate); an invalid one fails with ErrInvalidSchema
//     whatever the strategy, also on a topic with no schema yet.
//   - UNDEFINED means upstream's default, FULL (the broker's schemaCompatibilityStrategy;
//     Effective resolves topic → namespace → broker levels the same way).
//   - With no existing schema, or with ALWAYS_COMPATIBLE, the candidate is compatible: not even
//     the type is compared.
//   - Non-transitive strategies (BACKWARD, FORWARD, FULL, ALWAYS_INCOMPATIBLE) look only at the
//     latest existing schema: a different type is incompatible; byte-identical data is
//     compatible (even under ALWAYS_INCOMPATIBLE); otherwise the type's checker decides.
//   - Transitive strategies look at every existing schema: any of a different type makes the
//     candidate incompatible, then the type's checker decides over all of them (there is no
//     identical-data shortcut on this path, as upstream).
//
// Existing schemas are given oldest first and must already exclude anything before the latest
// deletion (upstream trims those). Check does not look for the candidate among the existing
// versions: as upstream's putSchemaIfAbsent, a registry returns an already registered version
// before checking anything.
//
// # Checkers per type (upstream's default schemaRegistryCompatibilityCheckers)
//
//   - AVRO: Avro schema resolution (github.com/hamba/avro/v2). BACKWARD: the candidate can read
//     data written with the existing schema; FORWARD: the existing schema can read data written
//     with the candidate; FULL: both. ALWAYS_INCOMPATIBLE: incompatible.
//   - JSON: the Java and Go clients send an Avro definition, checked exactly as AVRO. Very old
//     Java clients sent a JSON-Schema document ({"type":"object","id":...}); on the
//     non-transitive path upstream lets a broker move between the two formats freely, compares
//     two JSON-Schema documents by their "id" only, and accepts anything over a stored
//     definition it cannot read. On the transitive path every definition must be Avro.
//   - PROTOBUF_NATIVE: the root message's full name must not change (upstream's default
//     ProtobufNativeSchemaCompatibilityCheck; its field-aware checker is opt-in upstream and not
//     done here). ALWAYS_INCOMPATIBLE: incompatible.
//   - KEY_VALUE: the key and value sub-schema types must not change; then the key and the value
//     are each checked by their own type's checker.
//   - Every other type (STRING, the primitives, NONE/BYTES, and PROTOBUF, whose checker is not in
//     upstream's default list): always compatible, except under ALWAYS_INCOMPATIBLE.
//
// # Validation (upstream's SchemaDataValidator)
//
// AVRO, JSON and PROTOBUF data must be an Avro definition (JSON may instead be a JSON-Schema
// document); a top-level AVRO union is refused. PROTOBUF_NATIVE data must hold a descriptor
// set that defines its root message. STRING data must be empty or "null" (the Python client's);
// the other primitives' data must be empty; NONE is not checked. KEY_VALUE's halves are
// validated by their own types. AUTO_CONSUME is a client-side type and never valid here:
// callers keep AUTO_CONSUME consumers out of the registry.
//
// # Where this differs from upstream
//
//   - Names: upstream accepts '$' and non-ASCII letters in Avro names (Java nested classes give
//     namespaces such as "com.example.Outer$"); hamba/avro does not. Such names are rewritten
//     to an equivalent ASCII spelling before parsing and restored in messages, so equality of
//     names, and thus the check, is unchanged.
//   - Defaults: upstream parses without validating field defaults; hamba/avro refuses a default
//     that does not match its field's type, so such a definition is ErrInvalidSchema here.
//   - Error text differs; the outcome is what upstream would decide.
package schemacompat
