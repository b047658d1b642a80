// Frame for fragments that send a signed webhook, as a mail provider (or its test double) does.
declare const secret: string; // the endpoint's secret, `whsec_...`
declare const payload: unknown; // the event
declare const url: string; // the webhook endpoint, e.g. 'https://app.example/inbox/webhook'

/* fragment */
