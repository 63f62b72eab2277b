export declare const CHROMIUM: string;
/** Installs Debian's chromium with apt-get when it is missing; returns its path. */
export declare function ensureChromium(): string;
