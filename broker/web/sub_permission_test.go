package web_test

import (
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"
	plog "github.com/apache/pulsar-client-go/pulsar/log"
	"github.com/apache/pulsar-client-go/pulsaradmin/pkg/utils"
)

// permissions/subscription/{sub}: once a subscription has roles, a role with consume on the
// namespace may use it only if it is one of them; other subscriptions stay open to it.
func TestSubscriptionPermissionEnforced(t *testing.T) {
	e := newSecureEnv(t, false)
	root := e.admin(t, "admin")
	nsn := *mustNS(t, "public/default")
	for _, role := range []string{"alice", "bob"} {
		must(t, root.Namespaces().GrantNamespacePermission(nsn, role, []utils.AuthAction{"consume"}))
	}
	must(t, root.Namespaces().GrantSubPermission(nsn, "audit", []string{"alice"}))
	const topic = "persistent://public/default/guarded"
	must(t, root.Topics().Create(*topicName(t, topic), 0))

	subscribe := func(role, sub string) error {
		c, err := pulsar.NewClient(pulsar.ClientOptions{
			URL:              e.b.ServiceURL(),
			Authentication:   pulsar.NewAuthenticationToken(e.token(t, role)),
			OperationTimeout: 5 * time.Second,
			Logger:           plog.NewLoggerWithSlog(quiet),
		})
		must(t, err)
		defer c.Close()
		cons, err := c.Subscribe(pulsar.ConsumerOptions{Topic: topic, SubscriptionName: sub})
		if err == nil {
			cons.Close()
		}
		return err
	}
	if err := subscribe("alice", "audit"); err != nil {
		t.Errorf("alice on audit, a role it names: %v", err)
	}
	if err := subscribe("bob", "audit"); err == nil {
		t.Error("bob on audit, whose roles do not include it: accepted")
	}
	if err := subscribe("bob", "other"); err != nil {
		t.Errorf("bob on a subscription without roles: %v", err)
	}
	must(t, root.Namespaces().RevokeSubPermission(nsn, "audit", "alice"))
	if err := subscribe("bob", "audit"); err != nil {
		t.Errorf("bob on audit once it has no roles left: %v", err)
	}
}
