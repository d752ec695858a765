package schemacompat

import (
	"encoding/json"
	"errors"
	"fmt"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
)

// protobufNativeData is a PROTOBUF_NATIVE definition as the Java and Go clients send it.
type protobufNativeData struct {
	FileDescriptorSet      []byte `json:"fileDescriptorSet"` // base64 in the JSON
	RootMessageTypeName    string `json:"rootMessageTypeName"`
	RootFileDescriptorName string `json:"rootFileDescriptorName"`
}

// protobufNativeRoot reads a PROTOBUF_NATIVE definition and returns its root message's full
// name, after making sure the descriptor set builds and defines that message in the root file.
func protobufNativeRoot(data []byte) (string, error) {
	var d protobufNativeData
	if err := json.Unmarshal(data, &d); err != nil {
		return "", err
	}
	if d.RootMessageTypeName == "" {
		return "", errors.New("rootMessageTypeName missing")
	}
	var fds descriptorpb.FileDescriptorSet
	if err := proto.Unmarshal(d.FileDescriptorSet, &fds); err != nil {
		return "", fmt.Errorf("fileDescriptorSet: %v", err)
	}
	files, err := protodesc.NewFiles(&fds)
	if err != nil {
		return "", fmt.Errorf("fileDescriptorSet: %v", err)
	}
	desc, err := files.FindDescriptorByName(protoreflect.FullName(d.RootMessageTypeName))
	if err != nil {
		return "", fmt.Errorf("root message %s: %v", d.RootMessageTypeName, err)
	}
	md, ok := desc.(protoreflect.MessageDescriptor)
	if !ok {
		return "", fmt.Errorf("root %s is not a message", d.RootMessageTypeName)
	}
	if d.RootFileDescriptorName != "" && md.ParentFile().Path() != d.RootFileDescriptorName {
		return "", fmt.Errorf("root message %s is not in %s", d.RootMessageTypeName, d.RootFileDescriptorName)
	}
	return d.RootMessageTypeName, nil
}

// checkProtobufNative is upstream's default ProtobufNativeSchemaCompatibilityCheck: whatever the
// strategy (but ALWAYS_*), the root message may not change.
func checkProtobufNative(s Strategy, from []Schema, candidate Schema) error {
	root, err := protobufNativeRoot(candidate.Data)
	if err != nil {
		return invalid(candidate.Type, "%v", err) // Validate has already refused this
	}
	roots := make([]string, len(from))
	for i, f := range from {
		if roots[i], err = protobufNativeRoot(f.Data); err != nil {
			return storedInvalid(label(s, i, len(from)), err)
		}
	}
	if s == AlwaysIncompatible {
		return incompatible("schema compatibility strategy is %s", AlwaysIncompatible)
	}
	for i, r := range roots {
		if r != root {
			return incompatible("the root message may not change: %s has %s, the new schema %s",
				label(s, i, len(from)), r, root)
		}
	}
	return nil
}
