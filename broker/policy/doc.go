// Package policy is upstream's namespace and topic policies as the broker keeps them: their JSON
// under upstream's field names (Policies, TopicPolicies and the values they hold), the
// broker-wide values that stand under them (Defaults, read from broker.conf), and the layered
// resolution that says which value is in effect on a topic: the topic's own, else its
// namespace's, else the broker's (Layers).
//
// It holds no state, takes no locks and does no I/O. The broker stores the policies, validates
// them with upstream's reasons, applies what Layers resolves and answers the admin API with
// it; broker/web maps the REST paths onto them.
package policy
