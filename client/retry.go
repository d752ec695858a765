package client

import (
	"context"
	"fmt"
	"maps"
	"strconv"
	"time"
)

func (c *Consumer) retryProducerOptions() ProducerOptions {
	o := c.opts.DLQ.ProducerOptions
	o.Topic = c.opts.DLQ.RetryLetterTopic
	o.Name = ""
	if o.Compression == NoCompression {
		o.Compression = LZ4
	}
	o.TopicPurpose = TopicPurposeRetryLetter
	o.DisableBatching = true // as the Java client
	return o
}

// ReconsumeLater publishes m again on the retry topic to be delivered after delay, with the
// properties of the official Go client (RECONSUMETIMES, DELAY_TIME, and on the first hop
// REAL_TOPIC, ORIGIN_MESSAGE_ID and ORIGIN_MESSAGE_IDY_TIME), plus props. After
// DLQ.MaxDeliveries hops it goes to the DLQ instead. Then m is acknowledged. Requires
// RetryEnable.
func (c *Consumer) ReconsumeLater(ctx context.Context, m *Message, delay time.Duration, props map[string]string) error {
	if !c.opts.RetryEnable || c.opts.DLQ == nil {
		return fmt.Errorf("%w: ReconsumeLater needs RetryEnable", ErrInvalidConfig)
	}
	if _, err := c.own(m); err != nil {
		return err
	}
	delay = max(delay, 0)
	p := make(map[string]string, len(m.Properties)+len(props)+5)
	maps.Copy(p, m.Properties)
	maps.Copy(p, props)
	times := 1
	if s, ok := p[PropertyReconsumeTimes]; ok {
		n, _ := strconv.Atoi(s)
		times = n + 1
	} else {
		p[PropertyRealTopic] = m.Topic
		p[PropertyOriginMessageIDOld] = m.ID.String()
		p[PropertyOriginMessageID] = m.ID.String()
	}
	p[PropertyReconsumeTimes] = strconv.Itoa(times)
	p[PropertyDelayTime] = strconv.FormatInt(delay.Milliseconds(), 10)

	if uint32(times) > c.opts.DLQ.MaxDeliveries {
		if err := c.dlq.send(ctx, deadLetter(m, p)); err != nil {
			return err
		}
	} else {
		prod, err := c.retry.get(ctx, c.cl)
		if err != nil {
			return err
		}
		out := deadLetter(m, p)
		out.DeliverAfter = delay
		if _, err := prod.Send(ctx, out); err != nil {
			return err
		}
	}
	return c.Ack(m)
}
