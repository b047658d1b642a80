/** The verified access token of a Bearer request. */
export interface Principal {
  userId: string;
  sid: string;
  jti: string;
  /** Unix seconds of the login that started this session. */
  authTime: number;
  amr: string[];
  exp: number;
}
