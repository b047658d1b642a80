export { consoleMailer } from './console-mailer.js';
export { type SmtpMailerOptions, smtpMailer } from './smtp-mailer.js';
