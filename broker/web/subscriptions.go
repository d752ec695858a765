package web

import (
	"net/http"

	"github.com/letterbox-dev/letterbox/client/adminapi"
)

// Subscriptions of a topic: …/subscriptions, …/subscription/{sub} (create at a message id,
// delete ?force), skip/{n}, skip_all, expireMessages/{seconds}, all_subscription/expireMessages,
// resetcursor (by message id body) and resetcursor/{timestamp}.

func (s *Server) subscriptionRoutes(rt *router) {
	const sub = "/subscription/{subscription}"
	s.topicRoute(rt, "GET", "/subscriptions", func(w http.ResponseWriter, r *http.Request, topic string) {
		list, err := s.b.Subscriptions(topic)
		answer(w, list, err)
	})
	s.topicRoute(rt, "PUT", sub, func(w http.ResponseWriter, r *http.Request, topic string) {
		id := adminapi.Latest // upstream default
		if _, ok := decodeBody(w, r, &id, true); ok {
			noContent(w, s.b.CreateSubscription(topic, r.PathValue("subscription"), id))
		}
	})
	s.topicRoute(rt, "DELETE", sub, func(w http.ResponseWriter, r *http.Request, topic string) {
		if force, ok := queryBool(w, r, "force"); ok {
			noContent(w, s.b.DeleteSubscription(topic, r.PathValue("subscription"), force))
		}
	})
	s.topicRoute(rt, "POST", sub+"/skip/{n}", func(w http.ResponseWriter, r *http.Request, topic string) {
		if n, ok := pathInt(w, r, "n"); ok {
			noContent(w, s.b.SkipMessages(topic, r.PathValue("subscription"), n))
		}
	})
	s.topicRoute(rt, "POST", sub+"/skip_all", func(w http.ResponseWriter, r *http.Request, topic string) {
		noContent(w, s.b.ClearBacklog(topic, r.PathValue("subscription")))
	})
	s.topicRoute(rt, "POST", sub+"/expireMessages/{seconds}", func(w http.ResponseWriter, r *http.Request, topic string) {
		if secs, ok := pathInt(w, r, "seconds"); ok {
			noContent(w, s.b.ExpireMessages(topic, r.PathValue("subscription"), secs))
		}
	})
	s.topicRoute(rt, "POST", "/all_subscription/expireMessages/{seconds}", func(w http.ResponseWriter, r *http.Request, topic string) {
		if secs, ok := pathInt(w, r, "seconds"); ok {
			noContent(w, s.b.ExpireAllSubscriptions(topic, secs))
		}
	})
	s.topicRoute(rt, "POST", sub+"/resetcursor/{timestamp}", func(w http.ResponseWriter, r *http.Request, topic string) {
		if ts, ok := pathInt(w, r, "timestamp"); ok {
			noContent(w, s.b.ResetCursorByTime(topic, r.PathValue("subscription"), ts))
		}
	})
	s.topicRoute(rt, "POST", sub+"/resetcursor", func(w http.ResponseWriter, r *http.Request, topic string) {
		id := adminapi.MessageID{PartitionIndex: -1}
		if _, ok := decodeBody(w, r, &id, false); ok {
			noContent(w, s.b.ResetCursorToID(topic, r.PathValue("subscription"), id))
		}
	})
}
