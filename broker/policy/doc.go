// Package policy is upstream's namespace and topic policies as the broker applies them: the
// broker-wide values that stand under them (Defaults, read from broker.conf), the layered
// resolution that says which value is in effect on a topic: the topic's own, else its
// namespace's, else the broker's (Layers), and the names and copies the policies need (the
// values upstream accepts, CloneNamespace, CloneTopic). The documents themselves (Policies,
// TopicPolicies and the values they hold) are client/adminapi's, which client/admin shares.
//
// It holds no state, takes no locks and does no I/O. The broker stores the policies, validates
// them with upstream's reasons, applies what Layers resolves and answers the admin API with
// it; broker/web maps the REST paths onto them.
package policy
