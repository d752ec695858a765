package main

import (
	"bytes"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"sync"
	"syscall"

	"google.golang.org/protobuf/proto"

	"github.com/letterbox-dev/letterbox/client/wire"
	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// The null broker's forwarding mode, the ceiling of the many part's busy run: each SEND is
// receipted at once and its entry handed, as it came, to one consumer of its topic with
// permits (round robin), or kept until one has some. Nothing is stored, acknowledgements are
// ignored: what official clients reach against it is what they allow on this machine with
// many topics, as the headline's null broker is for one.

// echoChildArg, as the first argument, makes the bench binary a forwarding null broker of its
// own process (measureMany): it prints startBroker's ready line and runs until SIGTERM.
const echoChildArg = "echo-broker"

func echoChildMain() int {
	runtime.GOMAXPROCS(1) // as `letterbox broker` by default
	nb, err := startEchoBroker()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Printf("ready %s http://none\n", nb.url)
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, os.Interrupt)
	<-stop
	nb.Close()
	return 0
}

// echoTopics is the forwarding state of a null broker started by startEchoBroker.
type echoTopics struct {
	mu        sync.Mutex
	topics    map[string]*echoTopic
	producers map[echoKey]*echoTopic
	consumers map[echoKey]*echoConsumer
}

// echoKey names a producer or consumer: its connection and its id there.
type echoKey struct {
	c  *nullConn
	id uint64
}

type echoTopic struct {
	consumers []*echoConsumer
	next      int      // where the round robin resumes
	pending   [][]byte // entries no consumer had permits for, oldest first
	entryID   uint64
}

type echoConsumer struct {
	key     echoKey
	topic   *echoTopic
	permits int64
}

// startEchoBroker starts a null broker in forwarding mode.
func startEchoBroker() (*nullBroker, error) {
	nb, err := startNullBroker(1, 0)
	if err != nil {
		return nil, err
	}
	nb.echo = &echoTopics{
		topics:    make(map[string]*echoTopic),
		producers: make(map[echoKey]*echoTopic),
		consumers: make(map[echoKey]*echoConsumer),
	}
	return nb, nil
}

func (e *echoTopics) topic(name string) *echoTopic {
	t := e.topics[name]
	if t == nil {
		t = &echoTopic{}
		e.topics[name] = t
	}
	return t
}

// handle follows the commands that change what is forwarded where. It runs on c's reader
// after c.handle queued the reply, without c.mu: it takes e.mu, then the connections' locks.
func (e *echoTopics) handle(c *nullConn, f wire.Frame) {
	cmd := f.Cmd
	e.mu.Lock()
	defer e.mu.Unlock()
	switch cmd.GetType() {
	case pb.BaseCommand_PRODUCER:
		p := cmd.GetProducer()
		e.producers[echoKey{c, p.GetProducerId()}] = e.topic(p.GetTopic())
	case pb.BaseCommand_CLOSE_PRODUCER:
		delete(e.producers, echoKey{c, cmd.GetCloseProducer().GetProducerId()})
	case pb.BaseCommand_SUBSCRIBE:
		s := cmd.GetSubscribe()
		t := e.topic(s.GetTopic())
		ec := &echoConsumer{key: echoKey{c, s.GetConsumerId()}, topic: t}
		t.consumers = append(t.consumers, ec)
		e.consumers[ec.key] = ec
	case pb.BaseCommand_FLOW:
		fl := cmd.GetFlow()
		if ec := e.consumers[echoKey{c, fl.GetConsumerId()}]; ec != nil {
			ec.permits += int64(fl.GetMessagePermits())
			t := ec.topic
			for len(t.pending) > 0 && ec.permits > 0 {
				e.deliverLocked(ec, t.pending[0])
				t.pending[0] = nil
				t.pending = t.pending[1:]
			}
		}
	case pb.BaseCommand_CLOSE_CONSUMER:
		e.removeLocked(echoKey{c, cmd.GetCloseConsumer().GetConsumerId()})
	case pb.BaseCommand_UNSUBSCRIBE:
		e.removeLocked(echoKey{c, cmd.GetUnsubscribe().GetConsumerId()})
	case pb.BaseCommand_SEND:
		t := e.producers[echoKey{c, cmd.GetSend().GetProducerId()}]
		if t == nil {
			return
		}
		for range t.consumers {
			ec := t.consumers[t.next%len(t.consumers)]
			t.next++
			if ec.permits > 0 {
				e.deliverLocked(ec, f.Payload)
				return
			}
		}
		t.pending = append(t.pending, bytes.Clone(f.Payload)) // the reader reuses its buffer
	}
}

// forget drops what c's producers and consumers left behind when it closes.
func (e *echoTopics) forget(c *nullConn) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for k := range e.producers {
		if k.c == c {
			delete(e.producers, k)
		}
	}
	for k := range e.consumers {
		if k.c == c {
			e.removeLocked(k)
		}
	}
}

func (e *echoTopics) removeLocked(k echoKey) {
	ec := e.consumers[k]
	if ec == nil {
		return
	}
	delete(e.consumers, k)
	t := ec.topic
	for i, x := range t.consumers {
		if x == ec {
			t.consumers = append(t.consumers[:i], t.consumers[i+1:]...)
			break
		}
	}
}

// deliverLocked queues entry hp as a MESSAGE for ec on its connection, under a new entry id of
// its topic. e.mu is held.
func (e *echoTopics) deliverLocked(ec *echoConsumer, hp []byte) {
	t := ec.topic
	t.entryID++
	ec.permits--
	d := ec.key.c
	d.mu.Lock()
	if !d.closed {
		d.out, _ = wire.AppendCommand(d.out, &pb.BaseCommand{Type: pb.BaseCommand_MESSAGE.Enum(), Message: &pb.CommandMessage{
			ConsumerId: proto.Uint64(ec.key.id),
			MessageId:  &pb.MessageIdData{LedgerId: proto.Uint64(1), EntryId: proto.Uint64(t.entryID)},
		}}, hp)
	}
	d.mu.Unlock()
	d.cond.Signal()
}
