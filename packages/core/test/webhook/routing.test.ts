import { readdirSync, readFileSync } from 'node:fs';
import {
  DELIVERY_EVENT_TYPES,
  EVENT_RECEIVED,
  eventNameOf,
  INBOUND_RECEIVED,
  routeWebhook,
} from '@postern/core/webhook';
import { describe, expect, it } from 'vitest';

const FIXTURES = new URL('../fixtures/resend/', import.meta.url);
const fixture = (file: string) => JSON.parse(readFileSync(new URL(file, FIXTURES), 'utf8')) as object;
const route = (json: string) => routeWebhook(JSON.parse(json) as object);

describe('routing of the unified webhook route', () => {
  describe('rule 1: a type, event or name containing email.received, inbound or received is inbound', () => {
    it.each([
      ['{"type":"email.received"}'],
      ['{"event":"inbound"}'],
      ['{"name":"received"}'],
      ['{"type":"message.inbound.created","data":{"status":"x"}}'],
      ['{"type":"Email.Received"}'],
      // Rule 1 comes before the delivery-type rule.
      ['{"type":"email.delivered","name":"email.received"}'],
      ['{"event":"received","type":"email.bounced","data":{"from":"a@b.test"}}'],
    ])('%s -> inbound', (json) => {
      expect(route(json)).toBe('inbound');
    });
  });

  describe('rule 1b: a type or event naming a delivery type is an event', () => {
    const types = [...DELIVERY_EVENT_TYPES];
    it('covers exactly the eight delivery/engagement types', () => {
      expect(types.sort()).toEqual(
        [
          'bounced',
          'clicked',
          'complained',
          'delivered',
          'delivery_delayed',
          'failed',
          'opened',
          'sent',
        ].sort(),
      );
    });
    for (const t of types) {
      it(`${t} and email.${t} are events even with data.from/to/subject`, () => {
        const data = { from: 'a@b.test', to: ['c@d.test'], subject: 'Hi' };
        expect(routeWebhook({ type: t, data })).toBe('event');
        expect(routeWebhook({ type: `email.${t}`, data })).toBe('event');
        expect(routeWebhook({ event: `email.${t}`, data })).toBe('event');
        expect(routeWebhook({ event: t, data })).toBe('event');
      });
    }
    it('is case-insensitive and needs the whole name', () => {
      expect(route('{"type":"EMAIL.DELIVERED","data":{"from":"x"}}')).toBe('event');
      expect(route('{"type":"email.delivered.extra","data":{"from":"x"}}')).toBe('inbound');
      expect(route('{"type":"mail.delivered","data":{"from":"x"}}')).toBe('inbound');
      expect(route('{"name":"email.delivered","data":{"from":"x"}}')).toBe('inbound');
    });
  });

  describe('rule 2: a data object with from, to or subject is inbound', () => {
    it.each([
      ['{"type":"custom","data":{"from":"a@b.test"}}'],
      ['{"type":"custom","data":{"to":[]}}'],
      ['{"type":"custom","data":{"subject":null}}'],
      ['{"data":{"subject":"no type at all"}}'],
    ])('%s -> inbound', (json) => {
      expect(route(json)).toBe('inbound');
    });
    it('ignores data that is not an object, and inherited fields', () => {
      expect(route('{"type":"custom","data":[{"from":"x"}]}')).toBe('event');
      expect(route('{"type":"custom","data":"from to subject"}')).toBe('event');
      expect(route('{"type":"custom","data":{"__proto__":{"from":"x"}}}')).toBe('event');
      expect(routeWebhook({ type: 'custom', data: Object.create({ from: 'x' }) })).toBe('event');
    });
  });

  describe('rule 3: otherwise a string type is an event', () => {
    it.each([['{"type":"email.scheduled"}'], ['{"type":""}'], ['{"type":"custom","data":{"email_id":"x"}}']])(
      '%s -> event',
      (json) => {
        expect(route(json)).toBe('event');
      },
    );
  });

  describe('rule 4: otherwise inbound', () => {
    it.each([
      ['{}'],
      ['{"type":5}'],
      ['{"type":["email.delivered"]}'],
      ['{"event":"custom"}'],
      ['{"data":{}}'],
    ])('%s -> inbound', (json) => {
      expect(route(json)).toBe('inbound');
    });
  });

  it('never reads fields through the prototype chain', () => {
    expect(route('{"__proto__":{"type":"email.delivered"}}')).toBe('inbound');
    expect(routeWebhook(Object.create({ type: 'email.delivered' }))).toBe('inbound');
    expect(route('{"constructor":{"type":"x"},"toString":"received"}')).toBe('inbound');
    expect(route('{"type":"hasOwnProperty"}')).toBe('event');
  });

  describe("Resend's documented payloads", () => {
    const expected: Record<string, 'event' | 'inbound'> = {
      'email.sent.json': 'event',
      'email.delivered.json': 'event',
      'email.delivery_delayed.json': 'event',
      'email.bounced.json': 'event',
      'email.complained.json': 'event',
      'email.opened.json': 'event',
      'email.clicked.json': 'event',
      'email.failed.json': 'event',
      'email.received.json': 'inbound',
      // Not delivery types: rule 2 applies (they carry data.from/to/subject). docs/webhooks.md
      // advises pointing these at /events.
      'email.scheduled.json': 'inbound',
      'email.suppressed.json': 'inbound',
    };
    const files = readdirSync(FIXTURES).filter((f) => f.startsWith('email.'));
    it('has an expectation for every fixture', () => {
      expect(files.sort()).toEqual(Object.keys(expected).sort());
    });
    for (const [file, kind] of Object.entries(expected)) {
      it(`${file} -> ${kind}`, () => {
        expect(routeWebhook(fixture(file))).toBe(kind);
      });
    }
  });

  it('maps kinds to their outbox event names', () => {
    expect(eventNameOf('event')).toBe(EVENT_RECEIVED);
    expect(eventNameOf('inbound')).toBe(INBOUND_RECEIVED);
    expect(EVENT_RECEIVED).toBe('inbox.mail.webhook.event.received');
    expect(INBOUND_RECEIVED).toBe('inbox.mail.webhook.inbound.received');
  });
});
