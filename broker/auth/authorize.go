package auth

import (
	"slices"
	"strings"
)

// Action is a permission granted on a namespace or topic, under upstream's names.
type Action string

const (
	Produce Action = "produce"
	Consume Action = "consume"
)

// Policy is what one decision needs to know about the resource: its tenant's admin roles and
// the permissions granted on its namespace and (for a topic) on the topic itself.
type Policy struct {
	TenantAdmins []string
	// NamespaceActions is the namespace's auth_policies.namespace_auth: role → actions.
	NamespaceActions map[string][]string
	// TopicActions is auth_policies.destination_auth for the topic: role → actions.
	TopicActions map[string][]string
	// SubscriptionRoles is auth_policies.subscription_auth_roles for the subscription being
	// used; when non-empty, only these roles may consume through it.
	SubscriptionRoles []string
	// PrefixSubscription is the subscription being used when the namespace's
	// subscription_auth_mode is Prefix: its name must then start with the role.
	PrefixSubscription string
}

// Authorizer decides as upstream's PulsarAuthorizationProvider: a superuser may do anything;
// a tenant's admin may do anything within the tenant; anyone else needs the action granted on
// the namespace or the topic. The empty role (unauthenticated) is never authorized.
type Authorizer struct {
	superUsers []string
}

// NewAuthorizer returns an authorizer with the given superuser roles.
func NewAuthorizer(superUsers []string) *Authorizer {
	var su []string
	for _, r := range superUsers {
		if r != "" {
			su = append(su, r)
		}
	}
	return &Authorizer{superUsers: su}
}

// IsSuperUser reports whether role is a superuser.
func (a *Authorizer) IsSuperUser(role string) bool {
	return role != "" && slices.Contains(a.superUsers, role)
}

// IsTenantAdmin reports whether role may administer the tenant p describes.
func (a *Authorizer) IsTenantAdmin(role string, p Policy) bool {
	return a.IsSuperUser(role) || (role != "" && slices.Contains(p.TenantAdmins, role))
}

// Can reports whether role may perform act on the resource p describes. For Consume,
// p.SubscriptionRoles restricts who may use the subscription (upstream's
// subscription_auth_roles), and p.PrefixSubscription must start with the role (upstream's
// subscription_auth_mode Prefix); superusers and tenant admins are restricted by neither.
func (a *Authorizer) Can(role string, act Action, p Policy) bool {
	if a.IsTenantAdmin(role, p) {
		return true
	}
	if role == "" {
		return false
	}
	if act == Consume && len(p.SubscriptionRoles) > 0 && !slices.Contains(p.SubscriptionRoles, role) {
		return false
	}
	if act == Consume && PrefixRefused(role, p.PrefixSubscription) {
		return false
	}
	return slices.Contains(p.NamespaceActions[role], string(act)) || slices.Contains(p.TopicActions[role], string(act))
}

// PrefixRefused reports whether subscription mode Prefix refuses role the subscription (""
// for none, or not in Prefix mode).
func PrefixRefused(role, subscription string) bool {
	return subscription != "" && !strings.HasPrefix(subscription, role)
}

// CanLookup reports whether role may look the resource up: produce or consume, as upstream.
func (a *Authorizer) CanLookup(role string, p Policy) bool {
	p.SubscriptionRoles, p.PrefixSubscription = nil, ""
	return a.Can(role, Produce, p) || a.Can(role, Consume, p)
}
