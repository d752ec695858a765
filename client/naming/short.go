package naming

// DefaultNamespaceName is the namespace a bare name is in, "public/default".
const DefaultNamespaceName = DefaultTenant + "/" + DefaultNamespace

// ShortName is a topic's name as a person reads it, and as the clients accept it back:
// without persistent://, and without the namespace when it is ns (the screen's namespace, or
// DefaultNamespaceName). A name that is no topic name is kept as it is; a non-persistent one
// keeps its domain.
func ShortName(full, ns string) string {
	t, err := ParseTopic(full)
	switch {
	case err != nil:
		return full
	case ns != "" && t.Persistent && t.NamespaceName() == ns:
		return t.Local
	case t.Persistent:
		return t.NamespaceName() + "/" + t.Local
	}
	return t.String()
}
