package demo

import (
	"context"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/letterbox-dev/letterbox/client"
)

// The demo's data. Orders are JSON, payments Avro, shipments plain strings.

// Order is what checkout publishes on orders (JSON schema).
type Order struct {
	ID       string  `json:"id"`
	Customer string  `json:"customer"`
	Amount   float64 `json:"amount"`
	Currency string  `json:"currency"`
	Items    int     `json:"items"`
	Channel  string  `json:"channel"`
}

// orderSchema is the Avro-style definition upstream registers for a JSON schema.
const orderSchema = `{"type":"record","name":"Order","namespace":"demo","fields":[` +
	`{"name":"id","type":"string"},{"name":"customer","type":"string"},` +
	`{"name":"amount","type":"double"},{"name":"currency","type":"string"},` +
	`{"name":"items","type":"int"},{"name":"channel","type":"string"}]}`

// Payment is what payments-gateway publishes on payments (Avro schema).
type Payment struct {
	ID      string  `avro:"id"`
	OrderID string  `avro:"order_id"`
	Amount  float64 `avro:"amount"`
	Method  string  `avro:"method"`
	Status  string  `avro:"status"`
}

const paymentSchema = `{"type":"record","name":"Payment","namespace":"demo","fields":[` +
	`{"name":"id","type":"string"},{"name":"order_id","type":"string"},` +
	`{"name":"amount","type":"double"},{"name":"method","type":"string"},` +
	`{"name":"status","type":"string"}]}`

var (
	channels = []string{"web", "web", "mobile", "mobile", "store", "partner-api"}
	methods  = []string{"card", "card", "card", "paypal", "bank-transfer", "voucher"}
	statuses = []string{"authorized", "authorized", "authorized", "captured", "refunded"}
	carriers = []string{"DHL", "UPS", "FedEx", "La Poste", "PostNL"}
)

// Why billing fails an order: the first two hit the same orders every time (they end in the
// DLQ), the others are transient (a retry succeeds).
var (
	permanentReasons = []string{"payment declined", "card expired", "fraud check rejected"}
	transientReasons = []string{"timeout calling inventory", "tax service unavailable", "rate limited by payment provider"}
)

// fate tells what billing does with an order: 0 process it, 1 fail it every time, 2 fail its
// first attempt only. About 6% are permanent failures and 10% transient, so ~16% of new orders
// take the retry topic and ~6% end in the DLQ.
func fate(id string) (kind int, reason string) {
	h := fnv.New32a()
	h.Write([]byte(id))
	v := h.Sum32()
	switch p := v % 100; {
	case p < 6:
		return 1, permanentReasons[int(v/100)%len(permanentReasons)]
	case p < 16:
		return 2, transientReasons[int(v/100)%len(transientReasons)]
	}
	return 0, ""
}

func newRand() *rand.Rand { return rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64())) }

// checkout publishes orders.
func (w *Workload) checkout(rate float64) func(context.Context, *client.Client) (func(context.Context), error) {
	return func(ctx context.Context, cl *client.Client) (func(context.Context), error) {
		p, err := cl.CreateProducer(ctx, client.ProducerOptions{Topic: w.Topic("orders"), Name: "checkout",
			Schema: client.JSONSchema{Definition: orderSchema}, BatchingMaxPublishDelay: 20 * time.Millisecond})
		if err != nil {
			return nil, err
		}
		rnd := newRand()
		var n atomic.Int64
		n.Store(1000)
		return func(ctx context.Context) {
			defer p.Close()
			every(ctx, rate, func(ctx context.Context) {
				id := n.Add(1)
				o := Order{ID: "o-" + strconv.FormatInt(id, 10), Customer: fmt.Sprintf("customer-%d", rnd.IntN(40)),
					Amount: float64(rnd.IntN(30000)+500) / 100, Currency: "EUR", Items: 1 + rnd.IntN(5),
					Channel: channels[rnd.IntN(len(channels))]}
				p.SendAsync(ctx, &client.Message{Value: o, Key: o.Customer, EventTime: time.Now(),
					Properties: map[string]string{"source": "checkout", "channel": o.Channel}})
			})
		}, nil
	}
}

// billing consumes orders with retry and DLQ: failed orders are reconsumed later with a
// reason property; after three retries they go to orders-billing-DLQ, whose initial
// subscription billing-audit keeps them for inspection and replay.
func (w *Workload) billing() func(context.Context, *client.Client) (func(context.Context), error) {
	return func(ctx context.Context, cl *client.Client) (func(context.Context), error) {
		var cons []*client.Consumer
		for i := range 2 {
			c, err := cl.Subscribe(ctx, client.ConsumerOptions{Topic: w.Topic("orders"), SubscriptionName: "billing",
				Name: fmt.Sprintf("billing-%d", i+1), Type: client.Shared, InitialPosition: client.Earliest,
				Schema: client.JSONSchema{Definition: orderSchema}, RetryEnable: true, ReceiverQueueSize: 50,
				DLQ: &client.DLQPolicy{MaxDeliveries: 3, InitialSubscriptionName: "billing-audit"}})
			if err != nil {
				for _, c := range cons {
					c.Close()
				}
				return nil, err
			}
			cons = append(cons, c)
		}
		return func(ctx context.Context) {
			done := make(chan struct{})
			for _, c := range cons {
				go func() {
					defer func() { done <- struct{}{} }()
					defer c.Close()
					consume(ctx, c, func(ctx context.Context, m *client.Message) {
						var o Order
						if err := m.Decode(&o); err != nil {
							c.ReconsumeLater(ctx, m, 2*time.Second, map[string]string{"reason": "cannot decode order: " + err.Error()})
							return
						}
						kind, reason := fate(o.ID)
						retried := m.Properties[client.PropertyReconsumeTimes] != ""
						if kind == 1 || (kind == 2 && !retried) {
							if err := c.ReconsumeLater(ctx, m, time.Second, map[string]string{"reason": reason}); err != nil {
								w.log.Debug("demo: reconsume later", "err", err)
							}
							return
						}
						c.Ack(m)
					})
				}()
			}
			for range cons {
				<-done
			}
		}, nil
	}
}

// audit reads orders with AUTO_CONSUME, decoding each with its writer's schema.
func (w *Workload) audit() func(context.Context, *client.Client) (func(context.Context), error) {
	return func(ctx context.Context, cl *client.Client) (func(context.Context), error) {
		c, err := cl.Subscribe(ctx, client.ConsumerOptions{Topic: w.Topic("orders"), SubscriptionName: "audit-sink",
			Name: "auditor", Type: client.Exclusive, Schema: client.AutoConsumeSchema{}, ReceiverQueueSize: 50})
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context) {
			defer c.Close()
			consume(ctx, c, func(ctx context.Context, m *client.Message) {
				if _, err := m.DecodeGeneric(ctx); err != nil {
					w.log.Debug("demo: auto consume", "err", err)
				}
				c.Ack(m)
			})
		}, nil
	}
}

// paymentsGateway publishes payments (Avro), keyed by order so the ledger's Key_Shared group
// sees each order's payments in order.
func (w *Workload) paymentsGateway(rate float64) func(context.Context, *client.Client) (func(context.Context), error) {
	return func(ctx context.Context, cl *client.Client) (func(context.Context), error) {
		s, err := client.NewAvroSchema(paymentSchema)
		if err != nil {
			return nil, err
		}
		p, err := cl.CreateProducer(ctx, client.ProducerOptions{Topic: w.Topic("payments"), Name: "payments-gateway",
			Schema: s, BatchingMaxPublishDelay: 20 * time.Millisecond})
		if err != nil {
			return nil, err
		}
		rnd := newRand()
		n := 5000
		return func(ctx context.Context) {
			defer p.Close()
			every(ctx, rate, func(ctx context.Context) {
				n++
				pay := Payment{ID: "pay-" + strconv.Itoa(n), OrderID: "o-" + strconv.Itoa(1000+rnd.IntN(n-4000)),
					Amount: float64(rnd.IntN(30000)+500) / 100, Method: methods[rnd.IntN(len(methods))],
					Status: statuses[rnd.IntN(len(statuses))]}
				p.SendAsync(ctx, &client.Message{Value: pay, Key: pay.OrderID, EventTime: time.Now(),
					Properties: map[string]string{"source": "payments-gateway"}})
			})
		}, nil
	}
}

// ledger is a Key_Shared group of three consumers on payments; now and then one negatively
// acknowledges a payment, which comes back (to the consumer owning its key) a second later.
func (w *Workload) ledger() func(context.Context, *client.Client) (func(context.Context), error) {
	return func(ctx context.Context, cl *client.Client) (func(context.Context), error) {
		s, err := client.NewAvroSchema(paymentSchema)
		if err != nil {
			return nil, err
		}
		var cons []*client.Consumer
		for i := range 3 {
			c, err := cl.Subscribe(ctx, client.ConsumerOptions{Topic: w.Topic("payments"), SubscriptionName: "ledger",
				Name: fmt.Sprintf("ledger-%d", i), Type: client.KeyShared, InitialPosition: client.Earliest,
				Schema: s, NackRedeliveryDelay: time.Second, ReceiverQueueSize: 50})
			if err != nil {
				for _, c := range cons {
					c.Close()
				}
				return nil, err
			}
			cons = append(cons, c)
		}
		return func(ctx context.Context) {
			done := make(chan struct{})
			for _, c := range cons {
				go func() {
					defer func() { done <- struct{}{} }()
					defer c.Close()
					rnd := newRand()
					consume(ctx, c, func(ctx context.Context, m *client.Message) {
						var p Payment
						if err := m.Decode(&p); err == nil && m.RedeliveryCount == 0 && rnd.IntN(100) < 5 {
							c.Nack(m)
							return
						}
						c.Ack(m)
					})
				}()
			}
			for range cons {
				<-done
			}
		}, nil
	}
}

// warehouse publishes shipment notices as plain strings.
func (w *Workload) warehouse(rate float64) func(context.Context, *client.Client) (func(context.Context), error) {
	return func(ctx context.Context, cl *client.Client) (func(context.Context), error) {
		p, err := cl.CreateProducer(ctx, client.ProducerOptions{Topic: w.Topic("shipments"), Name: "warehouse",
			Schema: client.StringSchema{}, BatchingMaxPublishDelay: 20 * time.Millisecond})
		if err != nil {
			return nil, err
		}
		rnd := newRand()
		n := 0
		return func(ctx context.Context) {
			defer p.Close()
			every(ctx, rate, func(ctx context.Context) {
				n++
				id := fmt.Sprintf("o-%d", 1000+rnd.IntN(max(n, 1)*2+1))
				text := fmt.Sprintf("order %s shipped with %s, %d parcel(s)", id, carriers[rnd.IntN(len(carriers))], 1+rnd.IntN(3))
				if rnd.IntN(100) < 8 {
					text = fmt.Sprintf("order %s: parcel damaged at depot %d", id, 1+rnd.IntN(9))
				}
				p.SendAsync(ctx, &client.Message{Value: text, Key: id, Properties: map[string]string{"source": "warehouse"}})
			})
		}, nil
	}
}

// fulfilment consumes shipments without a retry topic: it negatively acknowledges the damaged
// parcels, which come back twice and then go to shipments-fulfilment-DLQ.
func (w *Workload) fulfilment() func(context.Context, *client.Client) (func(context.Context), error) {
	return func(ctx context.Context, cl *client.Client) (func(context.Context), error) {
		c, err := cl.Subscribe(ctx, client.ConsumerOptions{Topic: w.Topic("shipments"), SubscriptionName: "fulfilment",
			Name: "fulfilment", Type: client.Shared, InitialPosition: client.Earliest, Schema: client.StringSchema{},
			NackRedeliveryDelay: time.Second, ReceiverQueueSize: 50,
			DLQ: &client.DLQPolicy{MaxDeliveries: 2, DeadLetterTopic: w.Topic("shipments-fulfilment-DLQ"),
				InitialSubscriptionName: "fulfilment-audit"}})
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context) {
			defer c.Close()
			consume(ctx, c, func(ctx context.Context, m *client.Message) {
				var s string
				if err := m.Decode(&s); err != nil || strings.Contains(s, "damaged") {
					c.Nack(m)
					return
				}
				c.Ack(m)
			})
		}, nil
	}
}
