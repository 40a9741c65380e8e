/* words.h - shell words: a --launch-agent command, a command for ssh */
#ifndef RDP_RUN_WORDS_H
#define RDP_RUN_WORDS_H

#include <pmix_common.h>

/*
 * ssh joins the words of a remote command with spaces and hands the result
 * to the remote user's shell, so every word rdpmix-run sends must be quoted
 * for a POSIX shell.  A launch agent is given as one string ("ssh -p 2222
 * -o BatchMode=yes") and split into words the way a shell would split it,
 * without expanding anything.
 */

/**
 * Split @a cmd into words: blanks separate words; single quotes keep
 * everything up to the next single quote; double quotes keep everything
 * but a backslash before " \ $ ` or newline; a backslash outside quotes
 * keeps the next character.  *words_p is a malloc'ed NULL-terminated
 * vector (rdp_ctl_strv_free).  PMIX_ERR_BAD_PARAM for an unterminated
 * quote or no word at all, PMIX_ERR_NOMEM.
 */
pmix_status_t rdp_run_words_split(const char *cmd, char ***words_p);

/**
 * One string that a POSIX shell reads back as exactly the words of
 * @a words (NULL-terminated): words made only of safe characters
 * (letters, digits, and %+,-./:=@_) stay as they are, the others are put
 * in single quotes ('\'' for a quote inside).  malloc'ed; NULL if out of
 * memory.
 */
char *rdp_run_words_quote(char *const *words);

#endif
