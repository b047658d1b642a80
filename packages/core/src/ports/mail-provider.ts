/** Attachment metadata as the provider lists it. */
export interface ProviderAttachment {
  id: string;
  filename: string | null;
  contentType: string | null;
  size: number | null;
  contentId: string | null;
  contentDisposition: string | null;
}

/** A received email as the provider API returns it (`GET /emails/receiving/{email_id}`). */
export interface ReceivedEmail {
  from: string | null;
  to: string[];
  cc: string[];
  subject: string | null;
  html: string | null;
  text: string | null;
  /** Header name (lower case) to value(s). */
  headers: Map<string, string[]>;
  /** RFC 5322 Message-ID as given (may carry angle brackets). */
  messageId: string | null;
  attachments: ProviderAttachment[];
}

export interface DownloadedFile {
  bytes: Uint8Array;
  contentType: string | null;
}

export interface OutgoingEmail {
  from: string;
  to: string[];
  cc?: string[];
  subject: string;
  text: string;
  html?: string;
  /** Message-ID, In-Reply-To, References: values already free of CR/LF. */
  headers: Record<string, string>;
}

/** Per call: `signal` ends the call early (the outbox is stopping); it then throws, so the
 *  caller retries later. */
export interface ProviderCallOptions {
  signal?: AbortSignal;
}

/** The mail provider's API (Resend-compatible). `null` means the provider answered 404;
 *  anything else that fails throws, so the caller retries. */
export interface MailProvider {
  getReceivedEmail(emailId: string, options?: ProviderCallOptions): Promise<ReceivedEmail | null>;
  /** Looks up the attachment, then downloads its bytes from the `download_url` it names. */
  getReceivedAttachment(
    emailId: string,
    attachmentId: string,
    options?: ProviderCallOptions,
  ): Promise<DownloadedFile | null>;
  /** Sends one email; returns the provider's id for it. */
  send(mail: OutgoingEmail): Promise<{ id: string }>;
}
