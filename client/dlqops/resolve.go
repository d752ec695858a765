package dlqops

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/letterbox-dev/letterbox/client/admin"
	"github.com/letterbox-dev/letterbox/client/naming"
)

// Which topic a name typed by a person means. client/naming's rule (naming.Resolve) decides
// among the topics that exist: a qualified name (tenant/ns/x, or with its domain) is that
// topic; a short one is the one topic of that name in any namespace of the cluster, so that
// "orders-billing-DLQ" is public/demo's DLQ on the command line and in the TUI alike, where
// the clients' rule would look in public/default only. Several matches are a refusal listing
// them; none is ErrNotFound (a *naming.NameError, with near names). Only listings are read: a
// reader or a stats request on a missing topic would have the broker create it.

// Lister lists the full names of the topics of namespace ns ("tenant/ns"), partitioned ones
// by their own name, or of every namespace of the cluster when ns is "".
type Lister func(ctx context.Context, ns string) ([]string, error)

// Resolve finds the existing topic arg names, listing through the admin API: a qualified
// name's namespace in its domain, else every namespace of the cluster. Listing the whole
// cluster leaves out a tenant or namespace the credentials may not read (nothing there could
// be acted on); any other failure ends the listing, as a topic it hid could make a short name
// ambiguous.
func Resolve(ctx context.Context, ad *admin.Client, arg string) (string, error) {
	persistent := true
	if tn, err := admin.ParseTopic(strings.TrimSpace(arg)); err == nil && naming.Qualified(arg) {
		persistent = tn.Persistent
	}
	return ResolveWith(ctx, func(ctx context.Context, ns string) ([]string, error) {
		if ns != "" {
			return namespaceTopics(ctx, ad, ns, persistent)
		}
		return clusterTopics(ctx, ad)
	}, arg)
}

// ResolveWith finds the existing topic arg names among those list gives: the TUI lists
// through its data source, the command line through the admin API (Resolve).
func ResolveWith(ctx context.Context, list Lister, arg string) (string, error) {
	name := strings.TrimSpace(arg)
	ns := ""
	switch {
	case naming.Qualified(name):
		tn, err := admin.ParseTopic(name)
		if err != nil {
			return "", refuse(err)
		}
		ns = tn.NamespaceName()
	case strings.Count(name, "/") > 1 || name == "":
		return "", refusef("invalid topic name %q: name a topic as x, namespace/x, tenant/namespace/x or persistent://tenant/namespace/x", arg)
	}
	known, err := list(ctx, ns)
	switch {
	case ns != "" && admin.IsNotFound(err):
		return "", noNamespace{arg: arg, ns: ns, name: &naming.NameError{Name: name}}
	case ns != "" && err != nil:
		return "", err
	case err != nil:
		return "", fmt.Errorf("to find %q among the cluster's topics: %w (name it as tenant/namespace/%s)", arg, err, arg)
	}
	topic, err := naming.Resolve(name, known)
	var ne *naming.NameError
	switch {
	case errors.As(err, &ne) && ne.Ambiguous:
		return "", refuse(err)
	case errors.As(err, &ne):
		return "", notFound{err}
	}
	return topic, err
}

// noNamespace is a qualified name whose namespace the cluster does not have: ErrNotFound, and
// a *naming.NameError for those who ask which name matched nothing.
type noNamespace struct {
	arg, ns string
	name    *naming.NameError
}

func (e noNamespace) Error() string {
	return fmt.Sprintf("%s: namespace %s: %v", e.arg, e.ns, ErrNotFound)
}
func (e noNamespace) Is(target error) bool { return target == ErrNotFound }
func (e noNamespace) Unwrap() error        { return e.name }

// NamespaceTopics lists the persistent topics of namespace ns, partitioned ones by their own
// name beside their partitions: the topics a DLQ's name may derive from.
func NamespaceTopics(ctx context.Context, ad *admin.Client, ns string) ([]string, error) {
	return namespaceTopics(ctx, ad, ns, true)
}

// namespaceTopics lists the topics of ns of one domain.
func namespaceTopics(ctx context.Context, ad *admin.Client, ns string, persistent bool) ([]string, error) {
	var out []string
	for _, partitioned := range []bool{false, true} {
		var ts []string
		var err error
		if partitioned {
			ts, err = ad.PartitionedTopics(ctx, ns, persistent)
		} else {
			ts, err = ad.Topics(ctx, ns, persistent)
		}
		if err != nil {
			return nil, fmt.Errorf("topics of %s: %w", ns, err)
		}
		out = append(out, ts...)
	}
	return out, nil
}

// topicsBeside lists the topics of the namespace of topic (a full name), in its domain.
func topicsBeside(ctx context.Context, ad *admin.Client, topic string) ([]string, error) {
	tn, err := admin.ParseTopic(topic)
	if err != nil {
		return nil, refuse(err)
	}
	return namespaceTopics(ctx, ad, tn.NamespaceName(), tn.Persistent)
}

// clusterTopics lists the persistent topics of every namespace of the cluster.
func clusterTopics(ctx context.Context, ad *admin.Client) ([]string, error) {
	var failed error
	namespaces, err := Namespaces(ctx, ad, func(err error) {
		if !forbidden(err) && failed == nil {
			failed = err
		}
	})
	if err != nil {
		return nil, err
	}
	if failed != nil {
		return nil, failed
	}
	var out []string
	for _, ns := range namespaces {
		topics, err := NamespaceTopics(ctx, ad, ns)
		switch {
		case forbidden(err) || admin.IsNotFound(err): // not ours to read, or deleted since
			continue
		case err != nil:
			return nil, err
		}
		out = append(out, topics...)
	}
	return out, nil
}

// Namespaces lists every namespace of every tenant. A tenant whose namespaces cannot be listed
// is handed to problem and left out; only a cancelled ctx or the tenants' own listing ends it.
func Namespaces(ctx context.Context, ad *admin.Client, problem func(error)) ([]string, error) {
	tenants, err := ad.Tenants(ctx)
	if err != nil {
		return nil, fmt.Errorf("tenants: %w", err)
	}
	var out []string
	for _, t := range tenants {
		ns, err := ad.Namespaces(ctx, t)
		if err != nil {
			if ctx.Err() != nil {
				return nil, err
			}
			problem(fmt.Errorf("namespaces of %s: %w", t, err))
			continue
		}
		out = append(out, ns...)
	}
	return out, nil
}

func forbidden(err error) bool {
	s := admin.StatusOf(err)
	return s == http.StatusForbidden || s == http.StatusUnauthorized
}
