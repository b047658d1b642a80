/** Webhook intake options (`createPostern({ webhook })`). Body limit: `bodyLimits.webhook`. */
export interface WebhookOptions {
  /** Accepted clock difference between a signature's timestamp and now, either way. Default 300 s. */
  toleranceSeconds?: number;
  /** Standard Webhooks header prefixes, tried in order: `<prefix>-id`, `<prefix>-timestamp`,
   *  `<prefix>-signature`. Default `['webhook', 'svix']`. */
  headerPrefixes?: string[];
}

/** Where the intake sends a verified body. */
export type WebhookKind = 'event' | 'inbound';
