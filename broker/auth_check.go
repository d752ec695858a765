package broker

import (
	"crypto/tls"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/letterbox-dev/letterbox/broker/auth"
	"github.com/letterbox-dev/letterbox/broker/policy"
	"github.com/letterbox-dev/letterbox/client/naming"
)

// Security: authentication, authorization and TLS, built from Config by newSecurity. The
// mechanisms live in broker/auth; this file is the glue: what the broker exports to the web
// layer (Authenticate, Authorize, TLSConfig) and the checks the command handlers call (may).
// auth_conn.go holds the CONNECT/AUTH_CHALLENGE side, tls.go the certificates and listeners,
// brokerconf_auth.go the broker.conf keys.
//
// With AuthenticationEnabled false (the default) nothing here changes behaviour: CONNECT accepts
// any auth method and data and every check passes, as upstream with authenticationEnabled=false.

// defaultAuthRefreshCheck is upstream's authenticationRefreshCheckSeconds.
const defaultAuthRefreshCheck = 60 * time.Second

// security is fixed at New; nil fields are off.
type security struct {
	authn        *auth.Service    // authentication; nil: off
	authz        *auth.Authorizer // authorization; nil: off
	tls          *tls.Config      // the TLS listeners'; nil: plain TCP only
	refreshCheck time.Duration    // how often expired credentials are challenged
}

func newSecurity(cfg Config) (*security, error) {
	sec := &security{refreshCheck: cfg.AuthenticationRefreshCheck}
	if sec.refreshCheck <= 0 {
		sec.refreshCheck = defaultAuthRefreshCheck
	}
	if cfg.AuthenticationEnabled {
		svc, err := newAuthService(cfg)
		if err != nil {
			return nil, err
		}
		sec.authn = svc
	}
	if cfg.AuthorizationEnabled {
		if !cfg.AuthenticationEnabled {
			// Upstream would then refuse everyone (no role is authorized); say so instead.
			return nil, errors.New("broker: authorizationEnabled needs authenticationEnabled")
		}
		sec.authz = auth.NewAuthorizer(cfg.SuperUserRoles)
	}
	if cfg.TLSCertFile != "" || cfg.TLSKeyFile != "" {
		tc, err := newTLSConfig(cfg)
		if err != nil {
			return nil, err
		}
		sec.tls = tc
	} else if slices.Contains(cfg.AuthenticationProviders, auth.ClassTLS) {
		cfg.Logger.Warn("the TLS authentication provider is configured but TLS is not (no tlsCertificateFilePath): " +
			"no client can authenticate with a certificate")
	}
	return sec, nil
}

// newAuthService builds the providers authenticationProviders names (the token provider alone
// when it names none), as upstream's AuthenticationService.
func newAuthService(cfg Config) (*auth.Service, error) {
	classes := cfg.AuthenticationProviders
	if len(classes) == 0 {
		classes = []string{auth.ClassToken}
	}
	var (
		methods []string
		tokens  *auth.TokenProvider
		basic   *auth.BasicProvider
		err     error
	)
	for _, class := range classes {
		m, ok := auth.MethodOf(class)
		if !ok {
			return nil, fmt.Errorf("broker: authenticationProviders: %q is not implemented", class)
		}
		methods = append(methods, m)
		switch {
		case m == auth.MethodToken && tokens == nil:
			if tokens, err = newTokenProvider(cfg); err != nil {
				return nil, err
			}
		case m == auth.MethodBasic && basic == nil:
			spec := cfg.BasicAuthConf
			if spec == "" {
				return nil, errors.New("broker: the basic authentication provider needs basicAuthConf")
			}
			if basic, err = auth.LoadBasicConf(spec); err != nil {
				return nil, fmt.Errorf("broker: %w", err)
			}
		}
	}
	svc, err := auth.NewService(methods, tokens, basic, cfg.AnonymousUserRole)
	if err != nil {
		return nil, fmt.Errorf("broker: authentication: %w", err)
	}
	return svc, nil
}

func newTokenProvider(cfg Config) (*auth.TokenProvider, error) {
	tc := auth.TokenConfig{AuthClaim: cfg.TokenAuthClaim}
	var err error
	if cfg.TokenSecretKey != "" {
		if tc.SecretKey, err = auth.LoadKey(cfg.TokenSecretKey); err != nil {
			return nil, fmt.Errorf("broker: tokenSecretKey: %w", err)
		}
	}
	if cfg.TokenPublicKey != "" {
		if tc.PublicKey, err = auth.LoadKey(cfg.TokenPublicKey); err != nil {
			return nil, fmt.Errorf("broker: tokenPublicKey: %w", err)
		}
	}
	p, err := auth.NewTokenProvider(tc)
	if err != nil {
		return nil, fmt.Errorf("broker: token authentication: %w", err)
	}
	return p, nil
}

// AuthenticationEnabled reports whether clients must present credentials.
func (b *Broker) AuthenticationEnabled() bool { return b.sec.authn != nil }

// AuthorizationEnabled reports whether roles are checked against permissions.
func (b *Broker) AuthorizationEnabled() bool { return b.sec.authz != nil }

// Authenticate verifies credentials (method "token", data the JWT; "basic", data
// user:password) and returns their role. With authentication off it returns "" and no error.
// The error never contains the credentials.
func (b *Broker) Authenticate(method string, data []byte) (string, error) {
	if b.sec.authn == nil {
		return "", nil
	}
	pr, err := b.sec.authn.Authenticate(auth.Credentials{Method: method, Data: data})
	return pr.Role, err
}

// AuthenticateHTTP authenticates an admin request as upstream's web service: the method the
// request names in X-Pulsar-Auth-Method-Name, or each provider in turn, and the anonymous role
// when none accepts and one is configured. With authentication off it returns "" and no error.
func (b *Broker) AuthenticateHTTP(c auth.HTTPCredentials) (string, error) {
	if b.sec.authn == nil {
		return "", nil
	}
	pr, err := b.sec.authn.HTTP(c)
	return pr.Role, err
}

// Operation is what Authorize is asked about.
type Operation int

const (
	// OpSuperUser: anything outside a tenant (tenants, brokers). Resource unused.
	OpSuperUser Operation = iota + 1
	// OpTenantAdmin: administer a tenant and its namespaces and topics. Resource: the tenant.
	OpTenantAdmin
	// OpNamespaceConsume: list a namespace's topics. Resource: "tenant/ns".
	OpNamespaceConsume
	// OpLookup: look a topic up, read its metadata and stats. Resource: the topic name.
	OpLookup
	// OpProduce: publish to a topic. Resource: the topic name.
	OpProduce
	// OpConsume: subscribe, read, peek, move a subscription. Resource: the topic name; the
	// subscription may restrict who uses it.
	OpConsume
)

var opNames = map[Operation]string{OpSuperUser: "superuser", OpTenantAdmin: "tenant admin",
	OpNamespaceConsume: "list topics", OpLookup: "lookup", OpProduce: "produce", OpConsume: "consume"}

func (op Operation) String() string { return opNames[op] }

// Authorize reports whether role may perform op on resource (see Operation), as upstream's
// authorization provider decides. With authorization off everything is allowed; with it on, an
// unknown resource or a malformed name is refused.
func (b *Broker) Authorize(role string, op Operation, resource, subscription string) bool {
	z := b.sec.authz
	if z == nil {
		return true
	}
	if z.IsSuperUser(role) {
		return true
	}
	switch op {
	case OpTenantAdmin:
		return b.decide(resource, "", "", "", func(p auth.Policy) bool { return z.IsTenantAdmin(role, p) })
	case OpNamespaceConsume:
		tenant, _, err := splitNamespace(resource)
		if err != nil {
			return false
		}
		return b.decide(tenant, resource, "", "", func(p auth.Policy) bool { return z.Can(role, auth.Consume, p) })
	case OpLookup, OpProduce, OpConsume:
		name, err := parseTopicName(resource)
		if err != nil {
			return false
		}
		return b.authorizeTopic(role, op, name, subscription)
	}
	return false
}

func (b *Broker) authorizeTopic(role string, op Operation, name naming.Topic, subscription string) bool {
	z := b.sec.authz
	if z == nil || z.IsSuperUser(role) {
		return true
	}
	base := name.Base()
	return b.decide(name.Tenant, name.NamespaceName(), base.String(), subscription, func(p auth.Policy) bool {
		switch op {
		case OpProduce:
			return z.Can(role, auth.Produce, p)
		case OpConsume:
			return z.Can(role, auth.Consume, p)
		case OpLookup:
			return z.CanLookup(role, p)
		}
		return false
	})
}

// decide runs fn on the policy of tenant, namespace ns ("" for none), topic ("" for none) and
// subscription, under the admin lock so the policies cannot change underneath.
func (b *Broker) decide(tenant, ns, topic, subscription string, fn func(auth.Policy) bool) bool {
	a, unlock := b.adminLocked()
	defer unlock()
	var p auth.Policy
	if t := a.tenants[tenant]; t != nil {
		p.TenantAdmins = t.AdminRoles
	}
	if pol := a.policies[ns]; ns != "" && pol != nil {
		p.NamespaceActions = pol.AuthPolicies.NamespaceAuth
		if topic != "" {
			p.TopicActions = pol.AuthPolicies.DestinationAuth[topic]
		}
		if subscription != "" {
			p.SubscriptionRoles = pol.AuthPolicies.SubscriptionAuthRoles[subscription]
			if pol.SubscriptionAuthMode == policy.SubscriptionAuthPrefix {
				p.PrefixSubscription = subscription
			}
		}
	}
	return fn(p)
}

// may reports whether this connection's role may perform op on name (through subscription, for
// OpConsume). A refusal is logged with the role, never the credentials; the caller answers the
// request with AuthorizationError.
func (c *conn) may(op Operation, name naming.Topic, subscription string) bool {
	if c.b.sec.authz == nil || c.b.authorizeTopic(c.auth.role, op, name, subscription) {
		return true
	}
	c.log.Warn("not authorized", "role", c.auth.role, "operation", op.String(), "topic", name.String(),
		"subscription", subscription)
	return false
}

// subscribeRefusal is the message a refused SUBSCRIBE is answered with: upstream's own when the
// namespace's subscription auth mode Prefix refused the subscription's name (checked, as
// upstream, after the subscription's roles and before the role's permissions).
func (c *conn) subscribeRefusal(name naming.Topic, subscription string) string {
	prefix := false
	c.b.decide(name.Tenant, name.NamespaceName(), "", subscription, func(p auth.Policy) bool {
		prefix = (len(p.SubscriptionRoles) == 0 || slices.Contains(p.SubscriptionRoles, c.auth.role)) &&
			auth.PrefixRefused(c.auth.role, p.PrefixSubscription)
		return false
	})
	if prefix {
		return fmt.Sprintf("Failed to create consumer - The subscription name needs to be prefixed by the authentication role, like %s-xxxx for topic: %s",
			c.auth.role, name)
	}
	return "Client is not authorized to subscribe"
}

// mayProduce is the PRODUCER check. A producer naming an initial subscription (PIP-124) must
// also be allowed to consume through it, as upstream: the subscription is created only for a
// role that may consume.
func (c *conn) mayProduce(name naming.Topic, initialSubscription string) bool {
	if !c.may(OpProduce, name, "") {
		return false
	}
	return initialSubscription == "" || c.may(OpConsume, name, initialSubscription)
}

// mayListTopics is the GET_TOPICS_OF_NAMESPACE check: consume on the namespace, as upstream.
func (c *conn) mayListTopics(ns string) bool {
	if c.b.sec.authz == nil || c.b.Authorize(c.auth.role, OpNamespaceConsume, ns, "") {
		return true
	}
	c.log.Warn("not authorized", "role", c.auth.role, "operation", OpNamespaceConsume.String(), "namespace", ns)
	return false
}
