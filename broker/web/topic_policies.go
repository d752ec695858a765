package web

import "net/http"

// Topic-level policies (upstream's /admin/v2/{domain}/{tenant}/{ns}/{topic}/retention,
// .../messageTTL and the like) are not kept here: a policy applies to a namespace's topics. Upstream
// answers these paths 405 when its topic-level policies are off; so does this broker, with a
// reason that says where the policy goes instead. A generic 404 would read as a missing topic.

// topicPolicies are the last path segments of upstream's topic-level policy endpoints.
var topicPolicies = []string{
	"autoSubscriptionCreation", "backlogQuota", "backlogQuotaMap", "compactionThreshold",
	"deduplicationEnabled", "deduplicationSnapshotInterval", "delayedDelivery", "dispatchRate",
	"dispatcherPauseOnAckStatePersistent", "entryFilters", "inactiveTopicPolicies",
	"maxConsumers", "maxConsumersPerSubscription", "maxMessageSize", "maxProducers",
	"maxSubscriptionsPerTopic", "maxUnackedMessagesOnConsumer", "maxUnackedMessagesOnSubscription",
	"messageTTL", "offloadPolicies", "persistence", "publishRate", "replicationClusters",
	"replicatorDispatchRate", "retention", "schemaCompatibilityStrategy",
	"schemaValidationEnforced", "shadowTopics", "subscribeRate", "subscriptionDispatchRate",
	"subscriptionTypesEnabled",
}

const noTopicPolicies = "Topic level policies are not supported by this broker: set the policy on the topic's namespace (/admin/v2/namespaces/{tenant}/{namespace}/...)"

func (s *Server) topicPolicyRoutes(rt *router) {
	for _, p := range topicPolicies {
		for _, method := range []string{"GET", "POST", "PUT", "DELETE"} {
			s.topicRoute(rt, method, "/"+p, func(w http.ResponseWriter, _ *http.Request, _ string) {
				writeError(w, http.StatusMethodNotAllowed, noTopicPolicies)
			})
		}
	}
}
