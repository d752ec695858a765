package web

import "net/http"

// routes lists every route of the admin API. Each resource group registers its routes from its
// own file; a new group adds one line here.
func (s *Server) routes() http.Handler {
	rt := newRouter()
	s.brokerRoutes(rt)
	s.clusterRoutes(rt)
	s.tenantRoutes(rt)
	s.namespaceRoutes(rt)
	s.namespacePolicyRoutes(rt)
	s.namespaceDeliveryRoutes(rt)
	s.unsupportedNamespaceRoutes(rt)
	s.resourceGroupRoutes(rt)
	s.topicRoutes(rt)
	s.unloadRoutes(rt)
	s.topicPolicyRoutes(rt)
	s.statsRoutes(rt)
	s.subscriptionRoutes(rt)
	s.peekRoutes(rt)
	s.schemaRoutes(rt)
	s.lookupRoutes(rt)
	s.metricsRoutes(rt)
	return rt
}
