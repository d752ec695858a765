package cli

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/letterbox-dev/letterbox/client/admin"
	"github.com/letterbox-dev/letterbox/client/deadletter"
	"github.com/letterbox-dev/letterbox/client/naming"
	"github.com/letterbox-dev/letterbox/client/triage"
)

// Which topic a command's DLQ argument means, and whether an action may act on it.
//
// A name is resolved by client/naming's rule, the TUI's too: a qualified name (tenant/ns/x, or
// with its domain) is that topic; a short one is the one topic of that name in any namespace
// the cluster lists, so that "orders-billing-DLQ" is public/demo's DLQ on both, where the
// clients' rule would look in public/default only. Several matches are an error listing them.
//
// The dead-letter actions (discard, purge, resend, subscribe, replay) act only on a topic the
// DLQ rule (client/deadletter.Classify, the rule of `dlq ls` and the TUI's badges) calls a
// dead-letter or retry topic: purging an application's own subscription by a slip of the
// name loses its messages. --not-a-dlq says that the topic is meant.

// notADLQHelp is the help of --not-a-dlq.
const notADLQHelp = "act even on a topic the DLQ rule does not call a dead-letter or retry topic"

// resolveTopic finds the existing topic arg names. A name that is no topic name, or names
// several topics, is the command line's mistake (usageErr); one that names none wraps
// errNotFound.
func resolveTopic(ctx context.Context, ad *admin.Client, arg string) (string, error) {
	if naming.Qualified(arg) {
		tn, err := admin.ParseTopic(arg)
		if err != nil {
			return "", usageErr{err}
		}
		known, err := namespaceTopics(ctx, ad, tn)
		if admin.IsNotFound(err) {
			return "", fmt.Errorf("%s: namespace %s: %w", arg, tn.Tenant+"/"+tn.Namespace, errNotFound)
		}
		if err != nil {
			return "", err
		}
		return resolveAmong(arg, known)
	}
	if strings.Count(arg, "/") > 1 || strings.TrimSpace(arg) == "" {
		return "", usageErr{fmt.Errorf("invalid topic name %q: name a topic as x, namespace/x, tenant/namespace/x or persistent://tenant/namespace/x", arg)}
	}
	known, err := clusterTopics(ctx, ad)
	if err != nil {
		return "", fmt.Errorf("to find %q among the cluster's topics: %w (name it as tenant/namespace/%s)", arg, err, arg)
	}
	return resolveAmong(arg, known)
}

// resolveAmong applies the rule and words its errors for the command line.
func resolveAmong(arg string, known []string) (string, error) {
	topic, err := naming.Resolve(arg, known)
	var ne *naming.NameError
	switch {
	case errors.As(err, &ne) && ne.Ambiguous:
		return "", usageErr{err}
	case errors.As(err, &ne):
		return "", notFound{err}
	}
	return topic, err
}

// notFound is a name that matched no topic: errNotFound, worded by client/naming.
type notFound struct{ error }

func (notFound) Is(target error) bool { return target == errNotFound }

// clusterTopics lists the persistent topics of every namespace of the cluster. A tenant or
// namespace the credentials may not read is left out (nothing there could be acted on); any
// other failure ends the listing, as a topic it hid could make a short name ambiguous.
func clusterTopics(ctx context.Context, ad *admin.Client) ([]string, error) {
	var failed error
	namespaces, err := allNamespaces(ctx, ad, func(err error) {
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
		tenant, local, _ := strings.Cut(ns, "/")
		topics, err := namespaceTopics(ctx, ad, admin.TopicName{Topic: naming.Topic{Persistent: true, Tenant: tenant, Namespace: local}})
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

func forbidden(err error) bool {
	s := admin.StatusOf(err)
	return s == http.StatusForbidden || s == http.StatusUnauthorized
}

// requireLetterTopic refuses (usageErr) to act on topic when the DLQ rule calls it neither a
// dead-letter nor a retry topic, unless override (--not-a-dlq). cmd names the action.
func requireLetterTopic(ctx context.Context, ad *admin.Client, cmd, topic string, override bool) error {
	if override {
		return nil
	}
	tn, err := admin.ParseTopic(topic)
	if err != nil {
		return usageErr{err}
	}
	known, err := namespaceTopics(ctx, ad, tn)
	if err != nil {
		return err
	}
	base := naming.BaseName(topic) // a partition is judged as its topic
	parts, err := ad.Partitions(ctx, base)
	if err != nil && !admin.IsNotFound(err) {
		return fmt.Errorf("%s: %w", base, err)
	}
	v := triage.NewFinder(ad).Verdict(ctx, triage.Topic{Name: base, Partitions: parts, InCounter: -1}, known)
	if v.Kind != deadletter.Standard {
		return nil
	}
	action := strings.TrimPrefix(strings.TrimPrefix(cmd, "letterbox "), "dlq ")
	return usageErr{fmt.Errorf("%s is not a dead-letter or retry topic by the DLQ rule (no purpose property says so, its name "+
		"derives from no existing topic, its newest message carries no REAL_TOPIC): %s acts on dead letters; "+
		"add --not-a-dlq to %s it anyway", shortTopic(topic), action, action)}
}
