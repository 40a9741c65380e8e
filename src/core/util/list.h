/* list.h - intrusive doubly linked list (kernel style) */
#ifndef RDP_CORE_UTIL_LIST_H
#define RDP_CORE_UTIL_LIST_H

#include <stddef.h>

typedef struct rdp_list {
    struct rdp_list *next;
    struct rdp_list *prev;
} rdp_list_t;

#define RDP_LIST_INIT(_name) {&(_name), &(_name)}
#define rdp_container_of(_ptr, _type, _member)                               \
    ((_type *)((char *)(_ptr)-offsetof(_type, _member)))

static inline void rdp_list_init(rdp_list_t *head)
{
    head->next = head;
    head->prev = head;
}

static inline int rdp_list_is_empty(const rdp_list_t *head)
{
    return head->next == head;
}

static inline void rdp_list_insert_between(rdp_list_t *item, rdp_list_t *prev,
                                           rdp_list_t *next)
{
    item->prev = prev;
    item->next = next;
    prev->next = item;
    next->prev = item;
}

/** Append @a item at the tail of @a head. */
static inline void rdp_list_push_back(rdp_list_t *head, rdp_list_t *item)
{
    rdp_list_insert_between(item, head->prev, head);
}

static inline void rdp_list_push_front(rdp_list_t *head, rdp_list_t *item)
{
    rdp_list_insert_between(item, head, head->next);
}

/** Unlink @a item; it becomes a list of one so a second del is harmless. */
static inline void rdp_list_del(rdp_list_t *item)
{
    item->prev->next = item->next;
    item->next->prev = item->prev;
    item->next = item;
    item->prev = item;
}

/** Unlink and return the first item, or NULL when empty. */
static inline rdp_list_t *rdp_list_pop_front(rdp_list_t *head)
{
    rdp_list_t *item;

    if (rdp_list_is_empty(head)) {
        return NULL;
    }
    item = head->next;
    rdp_list_del(item);
    return item;
}

static inline size_t rdp_list_length(const rdp_list_t *head)
{
    size_t n = 0;

    for (const rdp_list_t *p = head->next; p != head; p = p->next) {
        n++;
    }
    return n;
}

/* Iterate entries of type typeof(*_elem) linked through field _member. */
#define rdp_list_for_each(_elem, _head, _member)                             \
    for (_elem = rdp_container_of((_head)->next, __typeof__(*_elem),         \
                                  _member);                                  \
         &(_elem)->_member != (_head);                                       \
         _elem = rdp_container_of((_elem)->_member.next,                     \
                                  __typeof__(*_elem), _member))

/* As rdp_list_for_each, but _elem may be unlinked/freed in the body. */
#define rdp_list_for_each_safe(_elem, _tmp, _head, _member)                  \
    for (_elem = rdp_container_of((_head)->next, __typeof__(*_elem),         \
                                  _member),                                  \
        _tmp   = rdp_container_of((_elem)->_member.next,                     \
                                  __typeof__(*_elem), _member);              \
         &(_elem)->_member != (_head); _elem = _tmp,                         \
        _tmp = rdp_container_of((_tmp)->_member.next, __typeof__(*_elem),    \
                                _member))

#endif
