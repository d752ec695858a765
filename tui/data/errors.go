package data

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/admin"
)

// The admin API's errors are client/admin's *admin.Error; the screens word one that came
// from a call they name by its path as "path: status reason"
// ("/admin/v2/persistent/t/ns/x/stats: 404 Topic not found").

// adminError is an *admin.Error with the path of the call it answered, worded as the screens
// show it.
type adminError struct {
	path string
	err  *admin.Error
}

func (e *adminError) Error() string {
	reason := e.err.Reason
	if len(reason) > 200 {
		reason = reason[:200] + "…"
	}
	if e.err.Withheld != "" {
		reason += " (" + e.err.Withheld + ")"
	}
	if reason == "" {
		reason = http.StatusText(e.err.Status)
	}
	return fmt.Sprintf("%s: %d %s", e.path, e.err.Status, reason)
}

func (e *adminError) Unwrap() error { return e.err }

// atPath words err, when it is an admin API error, as the answer to path (escaped, with its
// query); other errors, and nil, are returned as they are.
func atPath(path string, err error) error {
	var ae *admin.Error
	if errors.As(err, &ae) {
		return &adminError{path: path, err: ae}
	}
	return err
}

// notFound is a 404 of the call to path, for what a screen looked for and did not find.
func notFound(path, reason string) error {
	return &adminError{path: path, err: &admin.Error{Status: http.StatusNotFound, Reason: reason}}
}

// TopicNotFound is the error the admin API's stats of a missing topic come back as.
func TopicNotFound(topic string) error {
	return notFound(topicPath(topic)+"/stats", "Topic not found")
}

// SubscriptionNotFound is the error of a topic's stats that hold no subscription sub.
func SubscriptionNotFound(topic, sub string) error {
	return notFound(topicPath(topic)+"/stats", "Subscription "+sub+" not found")
}

// IsNotFound reports whether err is a 404 of the admin API.
func IsNotFound(err error) bool { return admin.IsNotFound(err) }

// IsUnauthorized reports whether err is a 401 or 403 of the admin API.
func IsUnauthorized(err error) bool {
	status := admin.StatusOf(err)
	return status == http.StatusUnauthorized || status == http.StatusForbidden
}

// What a not-found answer says is missing (MissingOf).
const (
	MissingTopic        = "topic"
	MissingSubscription = "subscription"
	MissingNamespace    = "namespace"
	MissingTenant       = "tenant"
)

// MissingOf says what a not-found err is about — a subscription, a topic, a namespace or a
// tenant — from the reason upstream's admin API or binary protocol gives ("Subscription not
// found", "Namespace does not exist", …); "" when err says nothing is missing. A 404 whose
// reason names nothing of these is taken for the topic, the thing every call is about.
func MissingOf(err error) string {
	var reason string
	var ae *admin.Error
	var se *client.ServerError
	switch {
	case err == nil:
		return ""
	case errors.Is(err, client.ErrSubscriptionNotFound):
		return MissingSubscription
	case errors.As(err, &ae) && ae.Status == http.StatusNotFound:
		reason = ae.Reason
	case errors.Is(err, client.ErrTopicNotFound) && errors.As(err, &se):
		reason = se.Message
	default:
		return ""
	}
	r := strings.ToLower(reason)
	switch {
	case strings.Contains(r, "subscription"):
		return MissingSubscription
	case strings.Contains(r, "namespace"):
		return MissingNamespace
	case strings.Contains(r, "tenant"):
		return MissingTenant
	}
	return MissingTopic
}
