"""Tool definitions of the Acme Corp catalog (the generator's source of truth)."""

from __future__ import annotations

from typing import Any

TOOLS: list[dict[str, Any]] = []

CURRENCIES = ["USD", "EUR", "GBP", "SGD"]
WAREHOUSES = ["RNO1", "CVG2", "AMS1", "SIN1"]
OFFICES = ["berlin", "london", "new_york", "austin", "singapore"]
REGIONS = ["us-east-1", "us-west-2", "eu-central-1", "ap-southeast-1"]


def S(desc: str, **kw: Any) -> dict[str, Any]:
    return {"type": "string", "description": desc, **kw}


def I(desc: str, **kw: Any) -> dict[str, Any]:  # noqa: E743
    return {"type": "integer", "description": desc, **kw}


def N(desc: str, **kw: Any) -> dict[str, Any]:
    return {"type": "number", "description": desc, **kw}


def B(desc: str, default: bool | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "boolean", "description": desc}
    if default is not None:
        out["default"] = default
    return out


def E(values: list[Any], desc: str, **kw: Any) -> dict[str, Any]:
    kind = "integer" if all(isinstance(v, int) for v in values) else "string"
    return {"type": kind, "enum": values, "description": desc, **kw}


def A(items: dict[str, Any], desc: str, **kw: Any) -> dict[str, Any]:
    return {"type": "array", "items": items, "description": desc, **kw}


def O(props: dict[str, Any], required: list[str] | None = None, desc: str | None = None, **kw):  # noqa: E743
    out: dict[str, Any] = {"type": "object"}
    if desc:
        out["description"] = desc
    out["properties"] = props
    if required:
        out["required"] = required
    out.update(kw)
    return out


def DT(desc: str) -> dict[str, Any]:
    return S(desc, format="date-time")


def D(desc: str) -> dict[str, Any]:
    return S(desc, format="date")


def EM(desc: str) -> dict[str, Any]:
    return S(desc, format="email")


def MONEY(desc: str) -> dict[str, Any]:
    return O(
        {
            "value": N("Amount in major units, e.g. 49.90.", minimum=0),
            "currency": E(CURRENCIES, "ISO 4217 currency code.", default="USD"),
        },
        ["value"],
        desc,
    )


def ADDRESS(desc: str) -> dict[str, Any]:
    return O(
        {
            "name": S("Recipient or company name."),
            "street": S("Street address, including unit or suite."),
            "city": S("City."),
            "region": S("State, province or region code."),
            "postal_code": S("ZIP or postal code."),
            "country": S("Two-letter ISO country code.", minLength=2, maxLength=2),
        },
        ["street", "city", "postal_code", "country"],
        desc,
    )


def tool(category: str, name: str, description: str, props: dict, required=None) -> None:
    schema: dict[str, Any] = {"type": "object", "properties": props}
    if required:
        schema["required"] = list(required)
    schema["additionalProperties"] = False
    TOOLS.append(
        {"name": name, "description": description, "input_schema": schema, "category": category}
    )


# --------------------------------------------------------------------------- crm (dotted)
STAGES = ["prospecting", "qualification", "proposal", "negotiation", "closed_won", "closed_lost"]
tool(
    "crm",
    "crm.contacts.search",
    "Search CRM contacts by name, email, phone number or company. Returns up to `limit` "
    "matches ordered by relevance.",
    {
        "query": S("Free-text search over name, email, phone and company name."),
        "company_id": S("Only return contacts at this company."),
        "owner_id": S("Only return contacts owned by this sales rep."),
        "limit": I("Maximum number of results.", default=20, minimum=1, maximum=100),
    },
    ["query"],
)
tool(
    "crm",
    "crm.contacts.get",
    "Fetch a single contact record, including custom fields and the owning sales rep.",
    {
        "contact_id": S("The contact's ID, e.g. `ct_19ab2`."),
        "include": A(
            E(["deals", "notes", "activities", "custom_fields"], "Related data to embed."),
            "Related records to include in the response.",
        ),
    },
    ["contact_id"],
)
tool(
    "crm",
    "crm.contacts.create",
    "Create a new contact. If a contact with the same email already exists the call fails "
    "unless `dedupe` is set to `merge`.",
    {
        "first_name": S("Given name."),
        "last_name": S("Family name."),
        "email": EM("Primary email address."),
        "phone": S("Phone number in E.164 format, e.g. +14155550123."),
        "company_id": S("Company (account) the contact works for."),
        "title": S("Job title."),
        "address": O(
            {
                "street": S("Street and number."),
                "city": S("City."),
                "region": S("State or region."),
                "postal_code": S("Postal code."),
                "country": S("Two-letter ISO country code."),
            },
            desc="Mailing address.",
        ),
        "tags": A(S("A tag."), "Free-form tags, e.g. `webinar-2024`."),
        "dedupe": E(
            ["fail", "merge", "create_anyway"],
            "What to do when the email already exists.",
            default="fail",
        ),
    },
    ["first_name", "last_name", "email"],
)
tool(
    "crm",
    "crm.contacts.update",
    "Update fields on an existing contact. Only the fields you pass are changed.",
    {
        "contact_id": S("The contact to update."),
        "fields": O(
            {
                "email": EM("New primary email."),
                "phone": S("New phone number (E.164)."),
                "title": S("New job title."),
                "owner_id": S("Reassign the contact to this sales rep."),
                "lifecycle_stage": E(
                    ["subscriber", "lead", "opportunity", "customer", "churned"],
                    "Where the contact is in the customer lifecycle.",
                ),
                "do_not_contact": B("Suppress all outreach to this contact."),
            },
            desc="Fields to change.",
            minProperties=1,
        ),
    },
    ["contact_id", "fields"],
)
tool(
    "crm",
    "crm.companies.get",
    "Look up a company (account) by ID or web domain. Includes industry, headcount, annual "
    "revenue and the account owner.",
    {
        "company_id": S("Company ID. Either this or `domain` is required."),
        "domain": S("Company web domain, e.g. `globex.com`."),
    },
)
tool(
    "crm",
    "crm.deals.create",
    "Open a new deal (opportunity) in the sales pipeline.",
    {
        "name": S("Deal name, e.g. `Globex - 200 seats renewal`."),
        "company_id": S("Company the deal is with."),
        "amount": MONEY("Expected deal value."),
        "stage": E(STAGES, "Initial pipeline stage.", default="prospecting"),
        "expected_close_date": D("When the deal is expected to close."),
        "owner_id": S("Sales rep who owns the deal. Defaults to the caller."),
        "contact_ids": A(S("Contact ID."), "Contacts involved in the deal."),
    },
    ["name", "company_id", "amount"],
)
tool(
    "crm",
    "crm.deals.update_stage",
    "Move a deal to another pipeline stage. Moving to `closed_lost` requires a loss reason.",
    {
        "deal_id": S("The deal to move."),
        "stage": E(STAGES, "Target stage."),
        "loss_reason": E(
            ["price", "competitor", "no_budget", "timing", "no_decision", "other"],
            "Why the deal was lost (only for closed_lost).",
        ),
        "note": S("Optional comment stored on the deal's timeline."),
    },
    ["deal_id", "stage"],
)
tool(
    "crm",
    "crm.deals.list",
    "List deals in the pipeline, filtered by stage, owner, amount or expected close date.",
    {
        "stage": E(STAGES, "Only deals in this stage."),
        "owner_id": S("Only deals owned by this rep."),
        "close_date": O(
            {"from": D("Earliest expected close date."), "to": D("Latest expected close date.")},
            desc="Expected close date range.",
        ),
        "min_amount": N("Only deals worth at least this much (USD)."),
        "sort": E(["close_date", "amount", "last_activity"], "Sort order.", default="close_date"),
        "limit": I("Page size.", default=50, maximum=200),
    },
)
tool(
    "crm",
    "crm.notes.add",
    "Attach a free-text note to a contact, company or deal record.",
    {
        "parent": O(
            {
                "type": E(["contact", "company", "deal"], "Kind of record."),
                "id": S("ID of the record."),
            },
            ["type", "id"],
            "The record the note belongs to.",
        ),
        "body": S("Note text. Markdown is rendered."),
        "pinned": B("Pin the note to the top of the record.", False),
    },
    ["parent", "body"],
)
tool(
    "crm",
    "crm.activities.log",
    "Record a sales activity (call, meeting, email, demo) against a contact so it shows up "
    "on their timeline and in rep activity reports.",
    {
        "contact_id": S("Contact the activity was with."),
        "type": E(["call", "meeting", "email", "demo"], "Kind of activity."),
        "occurred_at": DT("When it happened. Defaults to now."),
        "duration_minutes": I("Length of the call or meeting.", minimum=0),
        "outcome": E(
            ["connected", "left_voicemail", "no_answer", "completed", "rescheduled"],
            "How it went.",
        ),
        "summary": S("Short summary of what was discussed."),
    },
    ["contact_id", "type"],
)
tool(
    "crm",
    "crm.leads.convert",
    "Convert a qualified lead into a contact, and optionally create a company and an open "
    "deal at the same time.",
    {
        "lead_id": S("The lead to convert."),
        "create_company": B("Also create a company record from the lead's company.", True),
        "deal": O(
            {"name": S("Deal name."), "amount": MONEY("Deal value.")},
            ["name"],
            "If given, a deal is opened for the new contact.",
        ),
    },
    ["lead_id"],
)

# ---------------------------------------------------------------------- billing (camelCase)
tool(
    "billing",
    "getInvoice",
    "Retrieve an invoice by number or ID. Returns line items, tax, status and payment history.",
    {
        "invoiceId": S("Invoice ID (`in_...`) or human-readable number (`INV-2024-0042`)."),
        "expand": A(
            E(["lineItems", "payments", "customer", "creditNotes"], "Field to expand."),
            "Related objects to expand inline.",
        ),
    },
    ["invoiceId"],
)
tool(
    "billing",
    "listInvoices",
    "List invoices for a customer account. Filter by status and issue date.",
    {
        "customerId": S("Billing customer ID."),
        "status": E(["draft", "open", "paid", "void", "uncollectible"], "Invoice status."),
        "issuedAfter": D("Only invoices issued on or after this date."),
        "issuedBefore": D("Only invoices issued before this date."),
        "overdueOnly": B("Only open invoices past their due date.", False),
        "pageSize": I("Results per page.", default=25, maximum=100),
        "pageToken": S("Cursor from a previous response."),
    },
)
tool(
    "billing",
    "createInvoice",
    "Create a draft invoice for a customer. Line items can be added now or later; nothing is "
    "sent until you call sendInvoice.",
    {
        "customerId": S("Billing customer ID."),
        "currency": E(CURRENCIES, "Invoice currency.", default="USD"),
        "lineItems": A(
            O(
                {
                    "description": S("What is being billed."),
                    "quantity": N("Quantity.", minimum=0, default=1),
                    "unitPrice": N("Price per unit in major units."),
                    "taxCode": E(
                        ["standard", "reduced", "exempt", "reverse_charge"],
                        "Tax treatment.",
                        default="standard",
                    ),
                },
                ["description", "unitPrice"],
            ),
            "Invoice lines.",
            minItems=1,
        ),
        "dueDate": D("Payment due date; overrides `terms`."),
        "terms": E(
            ["due_on_receipt", "net_15", "net_30", "net_60"], "Payment terms.", default="net_30"
        ),
        "memo": S("Note printed on the invoice."),
        "purchaseOrder": S("Customer's PO number, printed on the invoice."),
    },
    ["customerId", "lineItems"],
)
tool(
    "billing",
    "sendInvoice",
    "Finalize a draft invoice and email it to the billing contact on file (or to the "
    "addresses given).",
    {
        "invoiceId": S("The draft invoice to finalize and send."),
        "to": A(EM("Recipient."), "Override recipients."),
        "message": S("Personal message included in the email body."),
    },
    ["invoiceId"],
)
tool(
    "billing",
    "voidInvoice",
    "Void an open invoice so it can no longer be paid. Paid invoices cannot be voided; issue "
    "a credit note instead.",
    {"invoiceId": S("Invoice to void."), "reason": S("Internal reason, kept in the audit log.")},
    ["invoiceId"],
)
tool(
    "billing",
    "createCreditNote",
    "Issue a credit note against a finalized invoice. Reduces the amount due, adds the "
    "credit to the customer's balance, or triggers a refund.",
    {
        "invoiceId": S("Invoice being credited."),
        "lines": A(
            O(
                {
                    "lineItemId": S("Invoice line being credited."),
                    "amount": N("Amount to credit for this line."),
                },
                ["lineItemId", "amount"],
            ),
            "Lines to credit; omit to credit the whole invoice.",
        ),
        "reason": E(
            ["duplicate", "fraudulent", "order_change", "product_unsatisfactory", "other"],
            "Reason shown on the credit note.",
        ),
        "creditTo": E(
            ["invoice_balance", "customer_balance", "refund"],
            "Where the credit goes.",
            default="invoice_balance",
        ),
    },
    ["invoiceId", "reason"],
)
tool(
    "billing",
    "applyAccountCredit",
    "Add a one-off credit to a customer account. It is applied automatically to upcoming invoices.",
    {
        "customerId": S("Billing customer ID."),
        "amount": MONEY("Credit amount."),
        "description": S("Shown to the customer, e.g. 'Goodwill credit for outage'."),
        "expiresAt": DT("When unused credit expires."),
    },
    ["customerId", "amount"],
)
tool(
    "billing",
    "getSubscription",
    "Get a subscription: plan, seat count, billing interval, status and next renewal date.",
    {"subscriptionId": S("Subscription ID, e.g. `sub_441`.")},
    ["subscriptionId"],
)
PLANS = ["starter", "team", "business", "enterprise"]
tool(
    "billing",
    "changeSubscriptionPlan",
    "Upgrade or downgrade a subscription, or change its seat count. Proration is applied by "
    "default.",
    {
        "subscriptionId": S("Subscription to change."),
        "plan": E(PLANS, "New plan."),
        "seats": I("New number of seats.", minimum=1),
        "billingInterval": E(["monthly", "annual"], "Billing interval."),
        "proration": E(
            ["create_prorations", "none", "always_invoice"],
            "How to handle the partial period.",
            default="create_prorations",
        ),
    },
    ["subscriptionId"],
)
tool(
    "billing",
    "cancelSubscription",
    "Cancel a subscription, either immediately or at the end of the current billing period.",
    {
        "subscriptionId": S("Subscription to cancel."),
        "atPeriodEnd": B("Keep it active until the paid period ends.", True),
        "reason": E(
            ["too_expensive", "missing_features", "switched_service", "unused", "other"],
            "Cancellation reason for churn reporting.",
        ),
        "feedback": S("Free-text feedback from the customer."),
    },
    ["subscriptionId"],
)
tool(
    "billing",
    "pauseSubscription",
    "Pause payment collection on a subscription until a given date.",
    {
        "subscriptionId": S("Subscription to pause."),
        "resumesAt": D("Date collection resumes."),
        "behavior": E(
            ["keep_access", "suspend"],
            "Whether the customer keeps access while paused.",
            default="keep_access",
        ),
    },
    ["subscriptionId", "resumesAt"],
)
tool(
    "billing",
    "getCustomerBalance",
    "Show what a customer owes: total of open invoices, the overdue part, and any unused "
    "account credit.",
    {"customerId": S("Billing customer ID.")},
    ["customerId"],
)

# ---------------------------------------------------------------------- payments (snake)
tool(
    "payments",
    "charge_card",
    "Charge a customer's saved card or other payment method. Amounts are in the smallest "
    "currency unit (cents).",
    {
        "customer_id": S("Customer to charge."),
        "payment_method_id": S("Saved payment method; defaults to the customer's default."),
        "amount_cents": I("Amount in cents.", minimum=50),
        "currency": E([c.lower() for c in CURRENCIES], "Currency.", default="usd"),
        "description": S("Appears on the receipt."),
        "capture": B("Capture immediately; false only authorizes.", True),
        "idempotency_key": S("Unique key so retries don't double-charge."),
    },
    ["customer_id", "amount_cents"],
)
tool(
    "payments",
    "capture_payment",
    "Capture a previously authorized payment. You can capture less than the authorized "
    "amount; the rest is released.",
    {
        "payment_id": S("Authorized payment ID (`pay_...`)."),
        "amount_cents": I("Amount to capture; defaults to the full authorization."),
    },
    ["payment_id"],
)
tool(
    "payments",
    "void_authorization",
    "Cancel an uncaptured authorization and release the hold on the customer's card.",
    {
        "payment_id": S("Authorized payment ID."),
        "reason": E(["duplicate", "fraudulent", "requested_by_customer", "abandoned"], "Why."),
    },
    ["payment_id"],
)
tool(
    "payments",
    "refund_payment",
    "Refund a payment in full or in part. The money goes back to the original payment method "
    "and usually arrives in 5-10 business days.",
    {
        "payment_id": S("Payment to refund. Either this or `order_id`."),
        "order_id": S("Look the payment up by store order number instead."),
        "amount_cents": I("Partial refund amount in cents; omit for a full refund."),
        "reason": E(
            ["requested_by_customer", "duplicate", "fraudulent", "damaged_goods"],
            "Refund reason.",
            default="requested_by_customer",
        ),
        "metadata": O(
            {"ticket_id": S("Related support ticket."), "note": S("Internal note.")},
            desc="Extra data stored on the refund.",
        ),
    },
)
tool(
    "payments",
    "get_payment",
    "Get the details of one payment: amount, status, card brand and last four digits, risk "
    "score and any refunds.",
    {
        "payment_id": S("Payment ID. Either this or `order_id`."),
        "order_id": S("Store order number."),
    },
)
tool(
    "payments",
    "list_payments",
    "List payments, newest first. Filter by customer, status or creation time.",
    {
        "customer_id": S("Only this customer's payments."),
        "status": E(
            ["succeeded", "pending", "failed", "refunded", "partially_refunded"],
            "Payment status.",
        ),
        "created": O(
            {"gte": DT("Created at or after."), "lte": DT("Created at or before.")},
            desc="Creation time range.",
        ),
        "limit": I("Page size.", default=20, maximum=100),
    },
)
tool(
    "payments",
    "create_payment_link",
    "Create a shareable checkout link that lets someone pay a fixed amount without an invoice.",
    {
        "amount_cents": I("Amount in cents.", minimum=50),
        "currency": E([c.lower() for c in CURRENCIES], "Currency.", default="usd"),
        "product_name": S("What the payer sees on the checkout page."),
        "expires_at": DT("When the link stops working."),
        "allow_promotion_codes": B("Let payers enter a promo code.", False),
        "after_completion": O(
            {
                "type": E(["redirect", "message"], "What happens after payment."),
                "url": S("Redirect URL.", format="uri"),
                "message": S("Confirmation message."),
            },
            ["type"],
            "Behavior after a successful payment.",
        ),
    },
    ["amount_cents", "product_name"],
)
tool(
    "payments",
    "list_disputes",
    "List chargebacks (disputes) with their reason and the deadline for submitting evidence.",
    {
        "status": E(["needs_response", "under_review", "won", "lost"], "Dispute status."),
        "limit": I("Page size.", default=20),
    },
)
tool(
    "payments",
    "submit_dispute_evidence",
    "Submit evidence for a disputed payment. Once submitted, evidence can't be changed.",
    {
        "dispute_id": S("Dispute ID (`dp_...`)."),
        "evidence": O(
            {
                "customer_communication": S("File ID of emails or chats with the customer."),
                "receipt": S("File ID of the receipt."),
                "shipping_tracking_number": S("Carrier tracking number proving delivery."),
                "refund_policy": S("File ID or text of the refund policy."),
                "explanation": S("Free-text explanation for the card issuer."),
            },
            desc="Evidence fields.",
        ),
        "submit": B("Submit now; false saves a draft.", True),
    },
    ["dispute_id", "evidence"],
)
tool(
    "payments",
    "list_payouts",
    "List payouts from the payment processor to Acme's bank account, with arrival dates.",
    {
        "status": E(["paid", "pending", "in_transit", "failed", "canceled"], "Payout status."),
        "arrival_date": O(
            {"gte": D("On or after."), "lte": D("On or before.")}, desc="Arrival date range."
        ),
        "limit": I("Page size.", default=10),
    },
)
tool(
    "payments",
    "update_payment_method",
    "Set a customer's default payment method, or update a card's expiry date and billing address.",
    {
        "customer_id": S("Customer."),
        "payment_method_id": S("Payment method to update."),
        "set_default": B("Make this the default for future charges and invoices."),
        "exp_month": I("New expiry month.", minimum=1, maximum=12),
        "exp_year": I("New expiry year (4 digits)."),
        "billing_address": O(
            {
                "line1": S("Address line 1."),
                "city": S("City."),
                "postal_code": S("Postal code."),
                "country": S("Two-letter country code."),
            },
            desc="Card billing address.",
        ),
    },
    ["customer_id", "payment_method_id"],
)

# ---------------------------------------------------------------------- support (snake)
PRIORITIES = ["low", "normal", "high", "urgent"]
tool(
    "support",
    "create_ticket",
    "Open a new helpdesk ticket on behalf of a customer.",
    {
        "subject": S("One-line summary."),
        "description": S("Full description of the problem."),
        "requester": O(
            {"email": EM("Customer email."), "name": S("Customer name.")},
            ["email"],
            "Who the ticket is for.",
        ),
        "priority": E(PRIORITIES, "Priority.", default="normal"),
        "channel": E(["email", "chat", "phone", "web"], "Where the request came in."),
        "product_area": E(
            ["billing", "shipping", "account", "product", "other"], "Routing category."
        ),
        "tags": A(S("Tag."), "Tags."),
    },
    ["subject", "requester"],
)
tool(
    "support",
    "get_ticket",
    "Fetch a ticket with its full conversation thread.",
    {
        "ticket_id": I("Ticket number."),
        "include_internal_notes": B("Include agent-only notes.", False),
    },
    ["ticket_id"],
)
tool(
    "support",
    "update_ticket",
    "Change a ticket's status, priority or tags.",
    {
        "ticket_id": I("Ticket number."),
        "status": E(["new", "open", "pending", "on_hold", "solved", "closed"], "New status."),
        "priority": E(PRIORITIES, "New priority."),
        "tags_add": A(S("Tag."), "Tags to add."),
        "tags_remove": A(S("Tag."), "Tags to remove."),
    },
    ["ticket_id"],
)
tool(
    "support",
    "assign_ticket",
    "Assign a ticket to an agent or to a group queue.",
    {
        "ticket_id": I("Ticket number."),
        "assignee": O(
            {
                "type": E(["agent", "group"], "Agent or group."),
                "id": S("Agent email or group name, e.g. `billing-tier1`."),
            },
            ["type", "id"],
            "New assignee.",
        ),
    },
    ["ticket_id", "assignee"],
)
tool(
    "support",
    "add_ticket_comment",
    "Add a public reply or an internal note to a ticket. Public replies are emailed to the "
    "requester.",
    {
        "ticket_id": I("Ticket number."),
        "body": S("Comment text."),
        "public": B("Visible to the requester.", True),
        "attachments": A(
            O(
                {"filename": S("File name."), "url": S("Where to fetch it.", format="uri")},
                ["url"],
            ),
            "Files to attach.",
        ),
    },
    ["ticket_id", "body"],
)
tool(
    "support",
    "search_tickets",
    "Search tickets. The query supports free text plus filters such as `status:open`, "
    "`requester:jane@example.com` or `tags:refund`.",
    {
        "query": S("Search expression."),
        "status": E(["new", "open", "pending", "on_hold", "solved", "closed"], "Status."),
        "assignee": S("Agent email."),
        "created_after": DT("Created after."),
        "sort": E(["created_at", "updated_at", "priority"], "Sort.", default="updated_at"),
        "limit": I("Max results.", default=25),
    },
    ["query"],
)
tool(
    "support",
    "escalate_ticket",
    "Escalate a ticket to tier 2, engineering or management. Raises priority to high and "
    "pages the on-duty lead.",
    {
        "ticket_id": I("Ticket number."),
        "level": E(["tier2", "engineering", "management"], "Where to escalate."),
        "reason": S("Why it needs escalation."),
    },
    ["ticket_id", "level"],
)
tool(
    "support",
    "merge_tickets",
    "Merge duplicate tickets into one. Comments from the source tickets are copied to the "
    "target, and the sources are closed.",
    {
        "target_ticket_id": I("Ticket to keep."),
        "source_ticket_ids": A(I("Ticket number."), "Tickets merged into the target.", minItems=1),
    },
    ["target_ticket_id", "source_ticket_ids"],
)
tool(
    "support",
    "get_sla_status",
    "Check the first-response and resolution SLA timers of a ticket and whether either has "
    "been breached.",
    {"ticket_id": I("Ticket number.")},
    ["ticket_id"],
)
tool(
    "support",
    "apply_macro",
    "Apply a saved macro (canned reply plus field changes) to a ticket.",
    {
        "ticket_id": I("Ticket number."),
        "macro": E(
            [
                "shipping_delay",
                "refund_issued",
                "password_reset",
                "request_more_info",
                "known_outage",
                "close_no_response",
            ],
            "Macro to apply.",
        ),
    },
    ["ticket_id", "macro"],
)

# ---------------------------------------------------------------------- hr (PascalCase)
LEAVE = ["vacation", "sick", "parental", "bereavement", "unpaid", "personal"]
tool(
    "hr",
    "GetEmployee",
    "Returns an employee's profile: job title, department, manager, office, start date and "
    "employment status.",
    {
        "employeeId": S("Employee ID, e.g. `E10293`. Either this or `email`."),
        "email": EM("Work email."),
    },
)
tool(
    "hr",
    "SearchEmployees",
    "Search the people directory by name, team, office or skill.",
    {
        "query": S("Name, team, or skill keywords."),
        "office": E(OFFICES, "Office location."),
        "department": S("Department name."),
        "limit": I("Max results.", default=20),
    },
    ["query"],
)
tool(
    "hr",
    "SubmitTimeOffRequest",
    "Create a leave request for an employee. Requests exceeding the available balance are "
    "rejected unless the type is `unpaid`.",
    {
        "employeeId": S("Employee requesting leave; defaults to the caller."),
        "type": E(LEAVE, "Kind of leave."),
        "startDate": D("First day off."),
        "endDate": D("Last day off (inclusive)."),
        "partialDay": O(
            {
                "date": D("The day that is only partly off."),
                "portion": E(["morning", "afternoon"], "Which half."),
            },
            ["date", "portion"],
            "Half-day leave.",
        ),
        "note": S("Note for the approver."),
    },
    ["type", "startDate", "endDate"],
)
tool(
    "hr",
    "ApproveTimeOffRequest",
    "Approve or deny a pending leave request. Only the employee's manager or HR can decide.",
    {
        "requestId": S("Leave request ID."),
        "decision": E(["approve", "deny"], "Decision."),
        "comment": S("Shown to the employee."),
    },
    ["requestId", "decision"],
)
tool(
    "hr",
    "GetTimeOffBalance",
    "Remaining vacation, sick and personal days for an employee, including accruals up to a date.",
    {"employeeId": S("Employee; defaults to the caller."), "asOf": D("Balance as of this date.")},
)
tool(
    "hr",
    "ListDirectReports",
    "List the people who report directly to a manager.",
    {
        "managerId": S("Manager's employee ID."),
        "includeContractors": B("Include contractors.", False),
    },
    ["managerId"],
)
tool(
    "hr",
    "GetOrgChart",
    "Return the reporting tree below a person or a department, down to the given depth.",
    {
        "rootEmployeeId": S("Start from this person."),
        "department": S("Or start from this department's head."),
        "depth": I("Levels to include.", default=2, minimum=1, maximum=6),
    },
)
tool(
    "hr",
    "StartOnboarding",
    "Kick off onboarding for a new hire: creates their accounts, assigns a buddy and "
    "schedules first-week tasks.",
    {
        "newHire": O(
            {
                "firstName": S("First name."),
                "lastName": S("Last name."),
                "personalEmail": EM("Personal email for pre-start communication."),
            },
            ["firstName", "lastName", "personalEmail"],
            "The new hire.",
        ),
        "startDate": D("First working day."),
        "jobTitle": S("Job title."),
        "department": S("Department."),
        "managerId": S("Manager's employee ID."),
        "office": E([*OFFICES, "remote"], "Work location."),
        "equipment": A(
            E(["laptop", "monitor", "phone", "headset", "standing_desk"], "Item."),
            "Equipment to order.",
        ),
    },
    ["newHire", "startDate", "jobTitle", "managerId"],
)
tool(
    "hr",
    "StartOffboarding",
    "Begin offboarding for a departing employee: schedules access removal, equipment return "
    "and final pay.",
    {
        "employeeId": S("Departing employee."),
        "lastDay": D("Last working day."),
        "type": E(["voluntary", "involuntary", "retirement", "contract_end"], "Separation type."),
        "revokeAccess": E(
            ["end_of_last_day", "immediately"], "When to cut access.", default="end_of_last_day"
        ),
    },
    ["employeeId", "lastDay", "type"],
)
tool(
    "hr",
    "UpdateEmployee",
    "Change an employee's job title, department, manager or work location, effective on a date.",
    {
        "employeeId": S("Employee."),
        "changes": O(
            {
                "jobTitle": S("New title."),
                "department": S("New department."),
                "managerId": S("New manager's employee ID."),
                "office": E([*OFFICES, "remote"], "New work location."),
            },
            desc="Fields to change.",
            minProperties=1,
        ),
        "effectiveDate": D("When the change takes effect; defaults to today."),
    },
    ["employeeId", "changes"],
)
tool(
    "hr",
    "UpdateCompensation",
    "Record a salary change or one-off bonus for an employee. Requires HR or finance role.",
    {
        "employeeId": S("Employee."),
        "change": O(
            {
                "type": E(["salary", "bonus", "equity"], "Kind of change."),
                "amount": N("New annual salary, or bonus amount."),
                "currency": E(CURRENCIES, "Currency.", default="USD"),
                "effectiveDate": D("Effective date."),
            },
            ["type", "amount"],
            "The change.",
        ),
        "reason": E(
            ["promotion", "merit", "market_adjustment", "retention", "spot_bonus"], "Reason."
        ),
    },
    ["employeeId", "change"],
)
tool(
    "hr",
    "ListHolidays",
    "List public and company holidays for an office and year.",
    {"office": E(OFFICES, "Office."), "year": I("Year, e.g. 2025.")},
    ["office"],
)

# ---------------------------------------------------------------------- calendar (kebab)
tool(
    "calendar",
    "create-event",
    "Create a calendar event and send invitations to the attendees.",
    {
        "title": S("Event title."),
        "start": DT("Start time."),
        "end": DT("End time."),
        "timezone": S("IANA time zone, e.g. `Europe/Berlin`.", default="UTC"),
        "attendees": A(
            O(
                {"email": EM("Attendee email."), "optional": B("Optional attendee.", False)},
                ["email"],
            ),
            "People to invite.",
        ),
        "location": S("Room or address."),
        "description": S("Agenda or notes."),
        "conference": E(["none", "acme_meet", "zoom"], "Video link.", default="acme_meet"),
        "recurrence": S("RRULE, e.g. `RRULE:FREQ=WEEKLY;BYDAY=MO`."),
        "reminders": A(
            O(
                {
                    "method": E(["email", "popup"], "How to remind."),
                    "minutes_before": I("Minutes before start.", minimum=0),
                },
                ["method", "minutes_before"],
            ),
            "Reminder overrides.",
        ),
    },
    ["title", "start", "end"],
)
tool(
    "calendar",
    "list-events",
    "List events on a calendar between two times.",
    {
        "calendar_id": S("Calendar ID or a person's email.", default="primary"),
        "time_min": DT("Start of the window."),
        "time_max": DT("End of the window."),
        "query": S("Text to match in title, description or attendees."),
    },
    ["time_min", "time_max"],
)
tool(
    "calendar",
    "update-event",
    "Change the time, title, attendees or location of an existing event. Attendees are "
    "notified unless `notify` is false.",
    {
        "event_id": S("Event to change."),
        "changes": O(
            {
                "title": S("New title."),
                "start": DT("New start."),
                "end": DT("New end."),
                "location": S("New location."),
                "add_attendees": A(EM("Email."), "People to add."),
                "remove_attendees": A(EM("Email."), "People to remove."),
            },
            desc="What to change.",
            minProperties=1,
        ),
        "notify": B("Email attendees about the change.", True),
    },
    ["event_id", "changes"],
)
tool(
    "calendar",
    "delete-event",
    "Cancel an event and notify its attendees.",
    {
        "event_id": S("Event to cancel."),
        "scope": E(
            ["this", "following", "all"], "For recurring events: which occurrences.", default="this"
        ),
        "message": S("Cancellation note sent to attendees."),
    },
    ["event_id"],
)
tool(
    "calendar",
    "find-free-slots",
    "Find times when everyone in a list is free, within working hours by default.",
    {
        "attendees": A(EM("Email."), "People who must attend.", minItems=1),
        "duration_minutes": I("Meeting length.", default=30),
        "window": O(
            {"start": DT("Search from."), "end": DT("Search until.")},
            ["start", "end"],
            "Time range to search.",
        ),
        "working_hours_only": B("Respect each person's working hours.", True),
    },
    ["attendees", "window"],
)
tool(
    "calendar",
    "respond-to-invite",
    "Accept, decline or tentatively accept a meeting invitation, optionally proposing a new time.",
    {
        "event_id": S("Invitation's event ID."),
        "response": E(["accepted", "declined", "tentative"], "RSVP."),
        "comment": S("Note to the organizer."),
        "propose_new_time": O(
            {"start": DT("Proposed start."), "end": DT("Proposed end.")},
            ["start", "end"],
            "Counter-proposal.",
        ),
    },
    ["event_id", "response"],
)
tool(
    "calendar",
    "book-room",
    "Reserve a meeting room for a time range. Filter by office, capacity and equipment.",
    {
        "office": E(OFFICES, "Office."),
        "start": DT("Start."),
        "end": DT("End."),
        "min_capacity": I("People the room must fit.", default=4),
        "needs": A(E(["video", "whiteboard", "phone", "projector"], "Feature."), "Equipment."),
        "event_id": S("Attach the room to this existing event."),
    },
    ["office", "start", "end"],
)
tool(
    "calendar",
    "set-out-of-office",
    "Block out a period in the calendar as out of office; new invitations during it are "
    "declined automatically.",
    {
        "start": DT("Start."),
        "end": DT("End."),
        "decline_message": S("Message sent with automatic declines."),
        "decline_existing": B("Also decline meetings already on the calendar.", False),
    },
    ["start", "end"],
)

# ---------------------------------------------------------------------- email (snake)
ATTACH = A(
    O(
        {"file_id": S("Acme Drive file ID."), "filename": S("Name shown to the recipient.")},
        ["file_id"],
    ),
    "Attachments from Acme Drive.",
)
tool(
    "email",
    "send_email",
    "Send an email from the user's mailbox.",
    {
        "to": A(EM("Recipient."), "Recipients.", minItems=1),
        "cc": A(EM("Recipient."), "CC recipients."),
        "bcc": A(EM("Recipient."), "BCC recipients."),
        "subject": S("Subject line."),
        "body": S("Message body."),
        "body_format": E(["text", "html"], "Body format.", default="text"),
        "attachments": ATTACH,
    },
    ["to", "subject", "body"],
)
tool(
    "email",
    "reply_to_email",
    "Reply to a message in an existing thread. Set `reply_all` to include everyone on the "
    "original message.",
    {
        "message_id": S("Message being replied to."),
        "body": S("Reply text."),
        "reply_all": B("Reply to all recipients.", False),
        "attachments": ATTACH,
    },
    ["message_id", "body"],
)
tool(
    "email",
    "forward_email",
    "Forward a message to new recipients with an optional note above it.",
    {
        "message_id": S("Message to forward."),
        "to": A(EM("Recipient."), "Recipients.", minItems=1),
        "note": S("Text added above the forwarded message."),
        "include_attachments": B("Keep the original attachments.", True),
    },
    ["message_id", "to"],
)
tool(
    "email",
    "search_email",
    "Search the mailbox. Supports operators like from:, to:, subject:, has:attachment, "
    "before: and after:.",
    {
        "query": S("Search expression, e.g. `from:dana@globex.com has:attachment`."),
        "folder": E(["inbox", "sent", "archive", "all"], "Folder.", default="all"),
        "max_results": I("Max messages.", default=20),
    },
    ["query"],
)
tool(
    "email",
    "read_email_thread",
    "Get every message in an email thread, oldest first.",
    {
        "thread_id": S("Thread ID."),
        "format": E(["full", "snippet"], "How much of each message.", default="full"),
    },
    ["thread_id"],
)
tool(
    "email",
    "create_draft",
    "Save an email as a draft without sending it, e.g. so the user can review it first.",
    {
        "to": A(EM("Recipient."), "Recipients."),
        "subject": S("Subject."),
        "body": S("Body."),
        "in_reply_to": S("Message ID if the draft is a reply."),
    },
    ["body"],
)
tool(
    "email",
    "schedule_email",
    "Queue an email to be sent at a later time.",
    {
        "message": O(
            {
                "to": A(EM("Recipient."), "Recipients."),
                "subject": S("Subject."),
                "body": S("Body."),
            },
            ["to", "subject", "body"],
            "The email.",
        ),
        "send_at": DT("When to send it."),
    },
    ["message", "send_at"],
)
tool(
    "email",
    "set_auto_reply",
    "Turn the vacation auto-responder on or off for incoming mail.",
    {
        "enabled": B("Turn on or off."),
        "subject": S("Auto-reply subject."),
        "message": S("Auto-reply text."),
        "start": DT("Start."),
        "end": DT("End."),
        "only_contacts": B("Only reply to people in the address book.", False),
    },
    ["enabled"],
)
tool(
    "email",
    "create_mail_filter",
    "Create a rule that labels, archives or forwards incoming messages matching some criteria.",
    {
        "criteria": O(
            {
                "from": S("Sender address or domain."),
                "to": S("Recipient address."),
                "subject_contains": S("Words in the subject."),
                "has_attachment": B("Only messages with attachments."),
            },
            desc="Which messages match.",
            minProperties=1,
        ),
        "actions": O(
            {
                "add_label": S("Label to apply."),
                "archive": B("Skip the inbox."),
                "mark_read": B("Mark as read."),
                "forward_to": EM("Forward to this address."),
            },
            desc="What to do with them.",
            minProperties=1,
        ),
    },
    ["criteria", "actions"],
)

# ---------------------------------------------------------------------- chat (camelCase)
tool(
    "chat",
    "postMessage",
    "Post a message to a channel. Supports markdown; pass `threadTs` to reply in a thread.",
    {
        "channel": S("Channel name (`#ops`) or ID."),
        "text": S("Message text (markdown)."),
        "threadTs": S("Timestamp of the parent message to reply in its thread."),
        "unfurlLinks": B("Show link previews.", True),
    },
    ["channel", "text"],
)
tool(
    "chat",
    "sendDirectMessage",
    "Send a private direct message to one person, or to a group DM of up to 8 people.",
    {
        "userIds": A(S("User ID or handle."), "Recipients.", minItems=1, maxItems=8),
        "text": S("Message text."),
    },
    ["userIds", "text"],
)
tool(
    "chat",
    "scheduleMessage",
    "Schedule a message to be posted to a channel later.",
    {
        "channel": S("Channel."),
        "text": S("Message text."),
        "postAt": DT("When to post."),
    },
    ["channel", "text", "postAt"],
)
tool(
    "chat",
    "createChannel",
    "Create a new public or private channel.",
    {
        "name": S("Lowercase name without #.", pattern="^[a-z0-9_-]{1,80}$"),
        "isPrivate": B("Private channel.", False),
        "topic": S("Channel topic."),
        "purpose": S("What the channel is for."),
    },
    ["name"],
)
tool(
    "chat",
    "inviteToChannel",
    "Add one or more users to a channel.",
    {"channel": S("Channel."), "userIds": A(S("User ID or handle."), "Users.", minItems=1)},
    ["channel", "userIds"],
)
tool(
    "chat",
    "archiveChannel",
    "Archive a channel. History stays searchable but nobody can post.",
    {"channel": S("Channel.")},
    ["channel"],
)
tool(
    "chat",
    "listChannels",
    "List channels, optionally only those the user belongs to.",
    {
        "types": A(E(["public", "private"], "Type."), "Channel types."),
        "memberOnly": B("Only channels the user is in.", False),
        "excludeArchived": B("Hide archived channels.", True),
    },
)
tool(
    "chat",
    "searchMessages",
    "Search chat history across every channel the user can see.",
    {
        "query": S("Words to find."),
        "in": S("Limit to a channel."),
        "from": S("Limit to a sender."),
        "after": D("Sent after."),
        "before": D("Sent before."),
        "sort": E(["relevance", "timestamp"], "Order.", default="relevance"),
    },
    ["query"],
)
tool(
    "chat",
    "addReaction",
    "React to a message with an emoji.",
    {
        "channel": S("Channel."),
        "timestamp": S("Message timestamp."),
        "emoji": S("Emoji name without colons, e.g. `white_check_mark`."),
    },
    ["channel", "timestamp", "emoji"],
)
tool(
    "chat",
    "setStatus",
    "Set the user's chat status text and emoji; it can clear itself automatically.",
    {
        "text": S("Status text, e.g. 'In a workshop'."),
        "emoji": S("Status emoji."),
        "expiresAt": DT("When to clear it."),
        "presence": E(["auto", "away"], "Presence.", default="auto"),
    },
    ["text"],
)

# ---------------------------------------------------------------------- files (prefixed)
tool(
    "files",
    "drive_upload_file",
    "Upload a file to Acme Drive. Give the content as base64 or a URL to fetch it from.",
    {
        "name": S("File name."),
        "parent_folder_id": S("Destination folder; defaults to My Drive."),
        "content_base64": S("File content, base64-encoded.", contentEncoding="base64"),
        "source_url": S("Fetch the content from this URL.", format="uri"),
        "mime_type": S("MIME type; guessed from the name if omitted."),
        "overwrite": B("Replace a file with the same name.", False),
    },
    ["name"],
)
tool(
    "files",
    "drive_download_file",
    "Download a file's contents. Native documents are exported to the requested format.",
    {
        "file_id": S("File ID."),
        "export_format": E(
            ["original", "pdf", "docx", "txt", "csv", "xlsx"], "Format.", default="original"
        ),
    },
    ["file_id"],
)
tool(
    "files",
    "drive_search_files",
    "Find files and folders by name, content, owner, type or modification date.",
    {
        "query": S("Words in the name or content."),
        "type": E(
            ["any", "document", "spreadsheet", "presentation", "pdf", "image", "folder"],
            "File type.",
            default="any",
        ),
        "owner": EM("Owner's email."),
        "modified_after": DT("Modified after."),
        "shared_with_me": B("Only files others shared with the user.", False),
        "limit": I("Max results.", default=20),
    },
)
tool(
    "files",
    "drive_share_file",
    "Share a file or folder with people or groups. Sends a notification email unless "
    "`notify` is false.",
    {
        "file_id": S("File or folder ID."),
        "permissions": A(
            O(
                {
                    "email": EM("Person or group address."),
                    "role": E(["viewer", "commenter", "editor"], "Access level."),
                },
                ["email", "role"],
            ),
            "Who gets access.",
            minItems=1,
        ),
        "notify": B("Send a notification email.", True),
        "message": S("Note in the notification."),
    },
    ["file_id", "permissions"],
)
tool(
    "files",
    "drive_create_folder",
    "Create a folder in Acme Drive.",
    {"name": S("Folder name."), "parent_folder_id": S("Parent folder; defaults to My Drive.")},
    ["name"],
)
tool(
    "files",
    "drive_move_file",
    "Move a file or folder into another folder.",
    {"file_id": S("File or folder."), "destination_folder_id": S("Target folder.")},
    ["file_id", "destination_folder_id"],
)
tool(
    "files",
    "drive_delete_file",
    "Move a file to the trash, or delete it permanently (owners only).",
    {"file_id": S("File."), "permanent": B("Skip the trash.", False)},
    ["file_id"],
)
tool(
    "files",
    "drive_list_versions",
    "List a file's revision history; optionally restore an earlier revision.",
    {
        "file_id": S("File."),
        "restore_version_id": S("If given, make this revision the current one."),
    },
    ["file_id"],
)
tool(
    "files",
    "docs_create_document",
    "Create a new document, blank or from a template.",
    {
        "title": S("Document title."),
        "folder_id": S("Folder to create it in."),
        "template": E(
            ["blank", "meeting_notes", "project_brief", "postmortem", "one_on_one", "rfc"],
            "Template.",
            default="blank",
        ),
        "initial_content": S("Markdown to start the document with."),
    },
    ["title"],
)
tool(
    "files",
    "docs_append_text",
    "Append markdown text to the end of an existing document, optionally under a new heading.",
    {
        "document_id": S("Document."),
        "text": S("Markdown to append."),
        "heading": S("Heading inserted above the text."),
    },
    ["document_id", "text"],
)
tool(
    "files",
    "sheets_append_rows",
    "Append rows to a tab of a spreadsheet.",
    {
        "spreadsheet_id": S("Spreadsheet."),
        "sheet": S("Tab name.", default="Sheet1"),
        "rows": A(A({"type": ["string", "number", "boolean", "null"]}, "One row."), "Rows."),
        "value_input": E(
            ["raw", "user_entered"],
            "`user_entered` parses formulas and dates.",
            default="user_entered",
        ),
    },
    ["spreadsheet_id", "rows"],
)
tool(
    "files",
    "sheets_read_range",
    "Read the cell values in an A1-notation range of a spreadsheet.",
    {"spreadsheet_id": S("Spreadsheet."), "range": S("A1 range, e.g. `Q3!A1:F200`.")},
    ["spreadsheet_id", "range"],
)

# ---------------------------------------------------------------------- code (prefixed)
REPO = S("Repository as `org/name`, e.g. `acme/storefront`.")
tool(
    "code",
    "codehub_create_issue",
    "Create an issue in a CodeHub repository.",
    {
        "repo": REPO,
        "title": S("Issue title."),
        "body": S("Issue body (markdown)."),
        "labels": A(S("Label."), "Labels, e.g. `bug`."),
        "assignees": A(S("Username."), "Assignees."),
        "milestone": S("Milestone title."),
    },
    ["repo", "title"],
)
tool(
    "code",
    "codehub_create_pull_request",
    "Open a pull request from a head branch into a base branch.",
    {
        "repo": REPO,
        "head": S("Branch with the changes."),
        "base": S("Branch to merge into.", default="main"),
        "title": S("PR title."),
        "body": S("Description."),
        "draft": B("Open as draft.", False),
    },
    ["repo", "head", "title"],
)
tool(
    "code",
    "codehub_list_pull_requests",
    "List pull requests in a repository.",
    {
        "repo": REPO,
        "state": E(["open", "closed", "merged", "all"], "State.", default="open"),
        "author": S("Filter by author."),
        "review_requested": S("PRs awaiting review from this user."),
    },
    ["repo"],
)
tool(
    "code",
    "codehub_request_review",
    "Request reviews on a pull request from users or teams.",
    {
        "repo": REPO,
        "number": I("PR number."),
        "reviewers": A(S("Username."), "Users."),
        "team_reviewers": A(S("Team slug."), "Teams."),
    },
    ["repo", "number"],
)
tool(
    "code",
    "codehub_comment_on_pull_request",
    "Comment on a pull request, either on the conversation or inline on a file and line.",
    {
        "repo": REPO,
        "number": I("PR number."),
        "body": S("Comment."),
        "path": S("File path for an inline comment."),
        "line": I("Line for an inline comment."),
    },
    ["repo", "number", "body"],
)
tool(
    "code",
    "codehub_merge_pull_request",
    "Merge a pull request. Fails if required checks or reviews are missing.",
    {
        "repo": REPO,
        "number": I("PR number."),
        "method": E(["merge", "squash", "rebase"], "Merge method.", default="squash"),
        "delete_branch": B("Delete the head branch afterwards.", True),
    },
    ["repo", "number"],
)
tool(
    "code",
    "codehub_get_file_contents",
    "Get the contents of a file in a repository at a branch, tag or commit.",
    {"repo": REPO, "path": S("File path."), "ref": S("Branch, tag or SHA.", default="main")},
    ["repo", "path"],
)
tool(
    "code",
    "codehub_create_branch",
    "Create a branch from another branch, tag or commit.",
    {"repo": REPO, "name": S("New branch name."), "from_ref": S("Source ref.", default="main")},
    ["repo", "name"],
)
tool(
    "code",
    "codehub_search_code",
    "Search source code across Acme's repositories.",
    {
        "query": S("Code search query."),
        "repo": S("Limit to one repository."),
        "language": S("Limit to a language, e.g. `python`."),
    },
    ["query"],
)
tool(
    "code",
    "codehub_trigger_workflow",
    "Start a CI/CD workflow run (build, test or deploy pipeline) on a ref.",
    {
        "repo": REPO,
        "workflow": S("Workflow file, e.g. `deploy.yml`."),
        "ref": S("Branch or tag.", default="main"),
        "inputs": O(
            {},
            desc="Workflow inputs as key/value strings.",
            additionalProperties={"type": "string"},
        ),
    },
    ["repo", "workflow"],
)
tool(
    "code",
    "codehub_get_workflow_run",
    "Get the status, duration and failing jobs of a CI run; with `include_logs`, also the "
    "tail of each failed job's log.",
    {
        "repo": REPO,
        "run_id": I("Run ID; omit for the latest run on `branch`."),
        "branch": S("Branch."),
        "include_logs": B("Include log tails of failed jobs.", False),
    },
    ["repo"],
)
tool(
    "code",
    "codehub_create_release",
    "Tag a commit and publish a release with notes.",
    {
        "repo": REPO,
        "tag": S("Tag, e.g. `v2.4.0`."),
        "target": S("Commit or branch to tag.", default="main"),
        "name": S("Release title."),
        "notes": S("Release notes (markdown)."),
        "generate_notes": B("Generate notes from merged PRs.", False),
        "prerelease": B("Mark as pre-release.", False),
    },
    ["repo", "tag"],
)
tool(
    "code",
    "codehub_add_collaborator",
    "Give a user access to a repository.",
    {
        "repo": REPO,
        "username": S("CodeHub username."),
        "permission": E(
            ["read", "triage", "write", "maintain", "admin"], "Permission.", default="write"
        ),
    },
    ["repo", "username"],
)

# ---------------------------------------------------------------------- cloud (dotted)
ENVS = ["dev", "staging", "production"]
tool(
    "cloud",
    "cloud.instances.list",
    "List compute instances in a project with their state, machine type and region.",
    {
        "project": S("Project ID."),
        "region": E(REGIONS, "Region."),
        "state": E(["running", "stopped", "terminated"], "State."),
        "label_selector": S("Label filter, e.g. `team=payments,env=prod`."),
    },
    ["project"],
)
tool(
    "cloud",
    "cloud.instances.restart",
    "Reboot a compute instance.",
    {
        "instance_id": S("Instance ID or name."),
        "mode": E(["soft", "hard"], "Soft reboot or power cycle.", default="soft"),
    },
    ["instance_id"],
)
tool(
    "cloud",
    "cloud.instances.resize",
    "Change an instance's machine type. The instance is stopped and started unless it "
    "supports live resize.",
    {
        "instance_id": S("Instance."),
        "machine_type": E(
            ["s-2vcpu-4gb", "m-4vcpu-16gb", "m-8vcpu-32gb", "c-16vcpu-32gb", "g-8vcpu-61gb-gpu"],
            "New machine type.",
        ),
        "allow_restart": B("Allow a stop/start if needed.", False),
    },
    ["instance_id", "machine_type"],
)
tool(
    "cloud",
    "cloud.deployments.create",
    "Deploy a container image version of a service to an environment.",
    {
        "service": S("Service name, e.g. `checkout-api`."),
        "environment": E(ENVS, "Environment."),
        "image_tag": S("Image tag or digest."),
        "strategy": O(
            {
                "type": E(["rolling", "blue_green", "canary"], "Rollout type.", default="rolling"),
                "canary_percent": I("Traffic share for canary.", minimum=1, maximum=50),
            },
            desc="Rollout strategy.",
        ),
        "env_overrides": O(
            {}, desc="Environment variables to set.", additionalProperties={"type": "string"}
        ),
    },
    ["service", "environment", "image_tag"],
)
tool(
    "cloud",
    "cloud.deployments.rollback",
    "Roll a service back to an earlier revision.",
    {
        "service": S("Service."),
        "environment": E(ENVS, "Environment."),
        "to_revision": S("Revision; defaults to the previous one."),
    },
    ["service", "environment"],
)
tool(
    "cloud",
    "cloud.dns.upsert_record",
    "Create or update a DNS record in a managed zone.",
    {
        "zone": S("Zone, e.g. `acme.io`."),
        "record": O(
            {
                "name": S("Record name, e.g. `status`."),
                "type": E(["A", "AAAA", "CNAME", "TXT", "MX"], "Type."),
                "value": S("Record value."),
                "ttl": I("TTL in seconds.", default=300),
            },
            ["name", "type", "value"],
            "The record.",
        ),
    },
    ["zone", "record"],
)
tool(
    "cloud",
    "cloud.storage.create_bucket",
    "Create an object storage bucket.",
    {
        "name": S("Globally unique bucket name."),
        "region": E(REGIONS, "Region."),
        "versioning": B("Keep old object versions.", False),
        "public_access": E(["blocked", "read_only"], "Public access.", default="blocked"),
        "lifecycle_rules": A(
            O(
                {
                    "prefix": S("Key prefix."),
                    "expire_after_days": I("Delete objects older than this.", minimum=1),
                },
                ["expire_after_days"],
            ),
            "Expiry rules.",
        ),
    },
    ["name", "region"],
)
tool(
    "cloud",
    "cloud.costs.get_breakdown",
    "Break down cloud spend by service, project, team tag or region over a date range.",
    {
        "start": D("First day."),
        "end": D("Last day."),
        "group_by": E(["service", "project", "team_tag", "region"], "Grouping."),
        "granularity": E(["daily", "monthly"], "Granularity.", default="monthly"),
    },
    ["start", "end", "group_by"],
)
tool(
    "cloud",
    "cloud.secrets.rotate",
    "Rotate a secret (API key, database password) and roll the new value out to the services "
    "that use it.",
    {
        "secret_name": S("Secret name."),
        "environment": E(ENVS, "Environment."),
        "revoke_old_after_minutes": I("Grace period for the old value.", default=60),
    },
    ["secret_name", "environment"],
)

# ---------------------------------------------------------------------- monitoring (dotted)
tool(
    "monitoring",
    "monitor.alerts.list",
    "List alerts, filtered by state, severity and service.",
    {
        "state": E(["firing", "acknowledged", "resolved"], "State.", default="firing"),
        "severity": E(["critical", "warning", "info"], "Severity."),
        "service": S("Service."),
    },
)
tool(
    "monitoring",
    "monitor.alerts.acknowledge",
    "Acknowledge an alert so it stops paging; optionally snooze it.",
    {
        "alert_id": S("Alert."),
        "note": S("Note for the timeline."),
        "snooze_minutes": I("Suppress re-notification for this long.", minimum=0),
    },
    ["alert_id"],
)
tool(
    "monitoring",
    "monitor.metrics.query",
    "Run a PromQL-style query over infrastructure metrics (CPU, memory, latency, error "
    "rate) and return a time series.",
    {
        "query": S("PromQL expression."),
        "start": DT("Start."),
        "end": DT("End."),
        "step": S("Resolution, e.g. `1m`.", default="1m"),
    },
    ["query"],
)
tool(
    "monitoring",
    "monitor.logs.search",
    "Search application logs.",
    {
        "query": S("Search terms or a field filter like `status:500`."),
        "service": S("Service."),
        "level": E(["debug", "info", "warn", "error"], "Minimum level."),
        "since": DT("From."),
        "until": DT("To."),
        "limit": I("Max lines.", default=200),
    },
    ["query"],
)
tool(
    "monitoring",
    "monitor.incidents.create",
    "Declare an incident: opens an incident record, a war-room channel and pages the "
    "incident commander.",
    {
        "title": S("Short title."),
        "severity": E(["sev1", "sev2", "sev3", "sev4"], "Severity."),
        "services": A(S("Service."), "Affected services."),
        "commander": EM("Incident commander; defaults to the on-call."),
        "summary": S("What is known so far."),
    },
    ["title", "severity"],
)
tool(
    "monitoring",
    "monitor.oncall.get_current",
    "Who is on call now (or at a given time) for a schedule.",
    {
        "schedule": E(
            ["platform", "payments", "storefront", "data", "security"], "On-call schedule."
        ),
        "at": DT("Point in time; defaults to now."),
    },
    ["schedule"],
)
tool(
    "monitoring",
    "monitor.uptime.create_check",
    "Create an HTTP check that requests a URL on an interval and alerts when it fails.",
    {
        "url": S("URL to check.", format="uri"),
        "interval_seconds": E([30, 60, 300], "Interval.", default=60),
        "expected_status": I("Expected HTTP status.", default=200),
        "regions": A(E(REGIONS, "Region."), "Where to check from."),
        "notify": A(S("Channel or email."), "Where to send alerts."),
    },
    ["url"],
)

# ---------------------------------------------------------------------- analytics (dotted camel)
DATE_RANGE = O({"start": D("First day."), "end": D("Last day.")}, ["start", "end"], "Date range.")
tool(
    "analytics",
    "insights.runReport",
    "Run a saved report, or an ad-hoc one from metrics and dimensions, and return the rows.",
    {
        "reportId": S("Saved report ID; omit for an ad-hoc report."),
        "adHoc": O(
            {
                "metrics": A(
                    E(
                        [
                            "revenue",
                            "orders",
                            "active_users",
                            "signups",
                            "churn_rate",
                            "aov",
                            "conversion_rate",
                        ],
                        "Metric.",
                    ),
                    "Metrics.",
                    minItems=1,
                ),
                "dimensions": A(
                    E(["date", "country", "channel", "plan", "product_category"], "Dimension."),
                    "Group by.",
                ),
                "filters": A(
                    O(
                        {
                            "field": S("Dimension."),
                            "op": E(["eq", "neq", "in", "contains"], "Operator."),
                            "value": S("Value."),
                        },
                        ["field", "op", "value"],
                    ),
                    "Filters.",
                ),
            },
            ["metrics"],
            "Ad-hoc definition.",
        ),
        "dateRange": DATE_RANGE,
    },
)
tool(
    "analytics",
    "insights.getDashboard",
    "Fetch a dashboard's tiles with their current values.",
    {"dashboardId": S("Dashboard ID or slug."), "dateRange": DATE_RANGE},
    ["dashboardId"],
)
tool(
    "analytics",
    "insights.getKpi",
    "Current value of a headline KPI and its change against the previous period.",
    {
        "kpi": E(["mrr", "arr", "nrr", "active_customers", "churn_rate", "cac", "ltv"], "KPI."),
        "period": E(["day", "week", "month", "quarter"], "Period.", default="month"),
    },
    ["kpi"],
)
tool(
    "analytics",
    "insights.exportReport",
    "Export a report's results as CSV, Excel or PDF, to download, email or save to Drive.",
    {
        "reportId": S("Report."),
        "format": E(["csv", "xlsx", "pdf"], "Format.", default="csv"),
        "destination": O(
            {
                "type": E(["download", "email", "drive"], "Where.", default="download"),
                "target": S("Email address or Drive folder ID."),
            },
            desc="Destination.",
        ),
    },
    ["reportId"],
)
tool(
    "analytics",
    "insights.scheduleReport",
    "Deliver a report on a schedule to a list of recipients.",
    {
        "reportId": S("Report."),
        "frequency": E(["daily", "weekly", "monthly"], "Frequency."),
        "dayOfWeek": E(["mon", "tue", "wed", "thu", "fri", "sat", "sun"], "For weekly."),
        "time": S("Local time, `HH:MM`.", pattern="^[0-2][0-9]:[0-5][0-9]$"),
        "recipients": A(EM("Email."), "Recipients.", minItems=1),
        "format": E(["csv", "xlsx", "pdf"], "Attachment format.", default="pdf"),
    },
    ["reportId", "frequency", "recipients"],
)
tool(
    "analytics",
    "insights.funnel",
    "Compute step-by-step conversion through an ordered list of product events.",
    {
        "steps": A(S("Event name, e.g. `checkout_started`."), "Ordered steps.", minItems=2),
        "dateRange": DATE_RANGE,
        "conversionWindowDays": I("Max days between first and last step.", default=7),
        "breakdown": E(
            ["none", "country", "channel", "device", "plan"], "Split by.", default="none"
        ),
    },
    ["steps", "dateRange"],
)
tool(
    "analytics",
    "insights.cohortRetention",
    "Retention table of customer cohorts grouped by signup week or month.",
    {
        "cohortBy": E(["signup_week", "signup_month", "first_purchase_month"], "Cohorts."),
        "metric": E(["active", "purchased", "subscribed"], "Retained means.", default="active"),
        "periods": I("Periods to show.", default=12),
    },
    ["cohortBy"],
)
tool(
    "analytics",
    "insights.createSegment",
    "Save a segment of users defined by properties and behavior, for reports and marketing "
    "audiences.",
    {
        "name": S("Segment name."),
        "conditions": A(
            O(
                {
                    "property": S("User property or event."),
                    "operator": E(
                        ["equals", "not_equals", "gt", "lt", "contains", "in_last_days"], "Op."
                    ),
                    "value": S("Value."),
                },
                ["property", "operator", "value"],
            ),
            "Conditions.",
            minItems=1,
        ),
        "match": E(["all", "any"], "Combine conditions with AND or OR.", default="all"),
    },
    ["name", "conditions"],
)

# ---------------------------------------------------------------------- inventory (Prefix_Pascal)
LINES = A(
    O(
        {"sku": S("SKU, e.g. `ACM-TR-2041`."), "quantity": I("Units.", minimum=1)},
        ["sku", "quantity"],
    ),
    "Lines.",
    minItems=1,
)
tool(
    "inventory",
    "Inventory_GetStockLevel",
    "On-hand, reserved and available quantity of a SKU, per warehouse or in total.",
    {
        "sku": S("SKU."),
        "warehouse": E(WAREHOUSES, "Warehouse code; omit for all."),
    },
    ["sku"],
)
tool(
    "inventory",
    "Inventory_AdjustStock",
    "Manually adjust the on-hand quantity of a SKU (damage, loss, found stock, recount). "
    "Every adjustment needs a reason code.",
    {
        "sku": S("SKU."),
        "warehouse": E(WAREHOUSES, "Warehouse."),
        "delta": I("Change in units; negative to remove."),
        "reasonCode": E(["damaged", "lost", "found", "recount", "expired"], "Reason."),
        "note": S("Comment."),
    },
    ["sku", "warehouse", "delta", "reasonCode"],
)
tool(
    "inventory",
    "Inventory_TransferStock",
    "Create a transfer order to move stock between warehouses; the receiving site confirms "
    "it on arrival.",
    {
        "lines": LINES,
        "fromWarehouse": E(WAREHOUSES, "Source."),
        "toWarehouse": E(WAREHOUSES, "Destination."),
        "priority": E(["standard", "expedited"], "Priority.", default="standard"),
    },
    ["lines", "fromWarehouse", "toWarehouse"],
)
tool(
    "inventory",
    "Inventory_ListLowStock",
    "SKUs at or below their reorder point.",
    {
        "warehouse": E(WAREHOUSES, "Warehouse."),
        "category": S("Product category."),
        "maxDaysOfCover": I("Also include SKUs with fewer days of cover than this."),
    },
)
tool(
    "inventory",
    "Inventory_CreatePurchaseOrder",
    "Raise a purchase order to a supplier.",
    {
        "supplierId": S("Supplier."),
        "lines": A(
            O(
                {
                    "sku": S("SKU."),
                    "quantity": I("Units.", minimum=1),
                    "unitCost": N("Cost per unit."),
                },
                ["sku", "quantity"],
            ),
            "Lines.",
            minItems=1,
        ),
        "warehouse": E(WAREHOUSES, "Deliver to."),
        "expectedDelivery": D("Expected delivery date."),
        "notes": S("Notes to supplier."),
    },
    ["supplierId", "lines", "warehouse"],
)
tool(
    "inventory",
    "Inventory_ReceivePurchaseOrder",
    "Record goods received against a purchase order. Partial receipts are allowed.",
    {
        "poNumber": S("PO number, e.g. `PO-7731`."),
        "lines": A(
            O(
                {
                    "sku": S("SKU."),
                    "quantityReceived": I("Good units received.", minimum=0),
                    "quantityDamaged": I("Damaged units.", minimum=0, default=0),
                },
                ["sku", "quantityReceived"],
            ),
            "Received lines.",
        ),
    },
    ["poNumber", "lines"],
)
tool(
    "inventory",
    "Inventory_GetProduct",
    "Product master data for a SKU: name, dimensions, weight, supplier, unit cost and list price.",
    {"sku": S("SKU.")},
    ["sku"],
)
tool(
    "inventory",
    "Inventory_UpdatePrice",
    "Set a SKU's price on a price list from a given time.",
    {
        "sku": S("SKU."),
        "price": MONEY("New price."),
        "priceList": E(["retail", "wholesale", "partner"], "Price list.", default="retail"),
        "effectiveFrom": DT("When the price applies; defaults to now."),
    },
    ["sku", "price"],
)
tool(
    "inventory",
    "Inventory_ReserveStock",
    "Hold stock for an order so it can't be sold twice. Reservations expire after `ttlMinutes`.",
    {
        "orderId": S("Order."),
        "lines": LINES,
        "warehouse": E(WAREHOUSES, "Warehouse."),
        "ttlMinutes": I("Expiry.", default=60),
    },
    ["orderId", "lines"],
)

# ---------------------------------------------------------------------- shipping (kebab)
PARCELS = A(
    O(
        {
            "weight_kg": N("Weight.", exclusiveMinimum=0),
            "length_cm": N("Length."),
            "width_cm": N("Width."),
            "height_cm": N("Height."),
        },
        ["weight_kg"],
    ),
    "Parcels.",
    minItems=1,
)
CARRIERS = ["ups", "fedex", "dhl", "usps", "acme_freight"]
LEVELS = ["ground", "express", "overnight", "international_economy"]
tool(
    "shipping",
    "get-shipping-rates",
    "Quote carrier rates and transit times for parcels between two addresses.",
    {
        "from": O(
            {"postal_code": S("Origin postal code."), "country": S("Origin country.")},
            ["postal_code", "country"],
            "Origin.",
        ),
        "to": O(
            {"postal_code": S("Destination postal code."), "country": S("Destination country.")},
            ["postal_code", "country"],
            "Destination.",
        ),
        "parcels": PARCELS,
        "service_level": E(LEVELS, "Only this service level."),
    },
    ["from", "to", "parcels"],
)
tool(
    "shipping",
    "create-shipment",
    "Buy a shipping label for an order and create the shipment.",
    {
        "order_id": S("Order."),
        "carrier": E(CARRIERS, "Carrier."),
        "service_level": E(LEVELS, "Service level.", default="ground"),
        "ship_from": E(WAREHOUSES, "Warehouse."),
        "ship_to": ADDRESS("Delivery address; defaults to the order's."),
        "parcels": PARCELS,
        "signature_required": B("Require a signature on delivery.", False),
        "insured_value": N("Declared value for insurance (USD)."),
    },
    ["order_id", "carrier"],
)
tool(
    "shipping",
    "track-shipment",
    "Tracking events and estimated delivery date for a shipment.",
    {
        "tracking_number": S("Carrier tracking number."),
        "shipment_id": S("Or Acme's shipment ID."),
        "carrier": E(CARRIERS, "Carrier, if known."),
    },
)
tool(
    "shipping",
    "list-shipments",
    "List shipments, filtered by status, carrier, order or ship date.",
    {
        "status": E(
            [
                "label_created",
                "in_transit",
                "out_for_delivery",
                "delivered",
                "exception",
                "returned",
            ],
            "Status.",
        ),
        "carrier": E(CARRIERS, "Carrier."),
        "order_id": S("Order."),
        "shipped_after": D("Shipped on or after."),
        "limit": I("Max results.", default=50),
    },
)
tool(
    "shipping",
    "cancel-shipment",
    "Void a shipping label before the carrier picks it up; the label cost is refunded.",
    {"shipment_id": S("Shipment.")},
    ["shipment_id"],
)
tool(
    "shipping",
    "schedule-pickup",
    "Book a carrier pickup at a warehouse.",
    {
        "warehouse": E(WAREHOUSES, "Warehouse."),
        "carrier": E(CARRIERS, "Carrier."),
        "window": O(
            {"start": DT("Earliest."), "end": DT("Latest.")}, ["start", "end"], "Pickup window."
        ),
        "estimated_parcels": I("Parcel count.", minimum=1),
    },
    ["warehouse", "carrier", "window"],
)
tool(
    "shipping",
    "create-return-label",
    "Generate a prepaid return label for an order and optionally email it to the customer.",
    {
        "order_id": S("Order."),
        "reason": E(
            ["damaged", "wrong_item", "no_longer_needed", "doesnt_fit", "other"], "Reason."
        ),
        "items": LINES,
        "email_to": EM("Send the label to this address."),
        "carrier": E(CARRIERS, "Carrier.", default="ups"),
    },
    ["order_id", "reason"],
)
tool(
    "shipping",
    "validate-address",
    "Check and normalize a postal address; suggests corrections when it is not deliverable.",
    {"address": ADDRESS("Address to check.")},
    ["address"],
)
tool(
    "shipping",
    "reroute-shipment",
    "Change the delivery address of a shipment in transit, or hold it at a carrier location. "
    "Carrier fees may apply.",
    {
        "shipment_id": S("Shipment."),
        "new_address": ADDRESS("New delivery address."),
        "hold_at_location": B("Hold at the nearest carrier location instead.", False),
    },
    ["shipment_id"],
)

# ---------------------------------------------------------------------- marketing (dotted)
tool(
    "marketing",
    "marketing.campaigns.create",
    "Create an email, SMS or push campaign for an audience. It is saved as a draft.",
    {
        "name": S("Internal name."),
        "channel": E(["email", "sms", "push"], "Channel.", default="email"),
        "audience": O(
            {"list_id": S("Mailing list."), "segment_id": S("Analytics segment.")},
            desc="Who receives it; one of list or segment.",
        ),
        "subject": S("Subject line (email)."),
        "content": O(
            {"template_id": S("Template."), "html": S("Raw HTML."), "text": S("Plain text.")},
            desc="Content.",
        ),
        "from_name": S("Sender name.", default="Acme"),
    },
    ["name", "audience"],
)
tool(
    "marketing",
    "marketing.campaigns.send",
    "Send a campaign to its whole audience now, or schedule it. Use send_test to preview first.",
    {"campaign_id": S("Campaign."), "send_at": DT("Schedule instead of sending now.")},
    ["campaign_id"],
)
tool(
    "marketing",
    "marketing.campaigns.send_test",
    "Send a test version of a campaign to a few addresses.",
    {
        "campaign_id": S("Campaign."),
        "test_emails": A(EM("Email."), "Recipients.", minItems=1, maxItems=10),
    },
    ["campaign_id", "test_emails"],
)
tool(
    "marketing",
    "marketing.campaigns.get_stats",
    "Opens, clicks, bounces, unsubscribes and attributed revenue of a sent campaign.",
    {"campaign_id": S("Campaign."), "compare_to": S("Another campaign to compare with.")},
    ["campaign_id"],
)
tool(
    "marketing",
    "marketing.lists.add_subscribers",
    "Add people to a mailing list. With double opt-in they get a confirmation email first.",
    {
        "list_id": S("List."),
        "subscribers": A(
            O(
                {
                    "email": EM("Email."),
                    "first_name": S("First name."),
                    "tags": A(S("Tag."), "Tags."),
                },
                ["email"],
            ),
            "People.",
            minItems=1,
        ),
        "double_opt_in": B("Require confirmation.", True),
    },
    ["list_id", "subscribers"],
)
tool(
    "marketing",
    "marketing.lists.unsubscribe",
    "Unsubscribe an address from one mailing list, or from all marketing email.",
    {
        "email": EM("Address."),
        "list_id": S("List; omit to unsubscribe from everything."),
        "reason": S("Reason, if given."),
    },
    ["email"],
)
tool(
    "marketing",
    "marketing.promo_codes.create",
    "Create a discount code for the online store.",
    {
        "code": S("Code customers type, e.g. `SPRING20`.", pattern="^[A-Z0-9_-]{3,32}$"),
        "discount": O(
            {
                "type": E(["percent", "fixed_amount"], "Kind."),
                "value": N("Percent or amount.", exclusiveMinimum=0),
            },
            ["type", "value"],
            "Discount.",
        ),
        "max_redemptions": I("Total uses allowed."),
        "expires_at": DT("Expiry."),
        "applies_to": A(S("SKU."), "Only these SKUs."),
    },
    ["code", "discount"],
)
tool(
    "marketing",
    "marketing.social.schedule_post",
    "Schedule a post to Acme's social media accounts.",
    {
        "networks": A(E(["linkedin", "x", "instagram", "facebook"], "Network."), "Networks."),
        "text": S("Post text."),
        "media_urls": A(S("Image or video URL.", format="uri"), "Media."),
        "publish_at": DT("When to publish."),
    },
    ["networks", "text", "publish_at"],
)
