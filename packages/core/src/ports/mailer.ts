export interface Mail {
  to: string;
  subject: string;
  text: string;
  html?: string;
  from?: string;
  /** Extra headers (Message-ID, In-Reply-To, References). CR/LF are stripped by callers. */
  headers?: Record<string, string>;
}

/** Sends one mail. Callers on auth paths queue and never await it, so mail latency
 *  cannot reveal whether an account exists. */
export interface Mailer {
  send(mail: Mail): Promise<void>;
}
